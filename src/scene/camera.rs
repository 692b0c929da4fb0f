//! An orbit camera: it circles a target at a distance, with yaw and pitch; drags orbit, the
//! wheel zooms, a secondary drag pans.

use glam::{Mat4, Vec3, Vec4};

/// The camera's vertical field of view.
const FOV_Y_RAD: f32 = 35.0 * std::f32::consts::PI / 180.0;
/// Pitch stays off the poles, where yaw would lose its meaning.
const MAX_PITCH_RAD: f32 = 1.5;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub yaw_rad: f32,
    pub pitch_rad: f32,
    pub distance: f32,
}

impl OrbitCamera {
    /// A camera that sees a box of `half_extent` around the origin in a viewport of `aspect`
    /// (width / height), from the front, a little above and to the side, so that the helices
    /// read as 3D at once.
    pub fn framing(half_extent: Vec3, aspect: f32) -> Self {
        let tan = (FOV_Y_RAD / 2.0).tan();
        // Fit the longer of the box's width and height, seen somewhat foreshortened.
        let fit = (half_extent.x * 1.15 / (tan * aspect.max(0.1))).max(half_extent.y / tan);
        Self {
            target: Vec3::ZERO,
            yaw_rad: -0.45,
            pitch_rad: 0.3,
            distance: (fit * 1.2 + half_extent.z).max(1.0),
        }
    }

    /// The camera's position in the world.
    pub fn eye(&self) -> Vec3 {
        let (sin_yaw, cos_yaw) = self.yaw_rad.sin_cos();
        let (sin_pitch, cos_pitch) = self.pitch_rad.sin_cos();
        self.target + self.distance * Vec3::new(sin_yaw * cos_pitch, sin_pitch, cos_yaw * cos_pitch)
    }

    /// Clip space from world space, for a viewport of `aspect` = width / height.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        let near = (self.distance * 0.01).max(1e-3);
        let far = self.distance * 10.0 + 100.0;
        let proj = Mat4::perspective_rh(FOV_Y_RAD, aspect.max(1e-3), near, far);
        proj * Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }

    /// Turns the camera by a drag of `delta_px` in a viewport `height_px` tall.
    pub fn orbit(&mut self, delta_px: [f32; 2], height_px: f32) {
        let per_px = std::f32::consts::PI / height_px.max(1.0);
        self.yaw_rad -= delta_px[0] * per_px;
        self.pitch_rad =
            (self.pitch_rad + delta_px[1] * per_px).clamp(-MAX_PITCH_RAD, MAX_PITCH_RAD);
    }

    /// Moves closer (`factor` < 1) or further away.
    pub fn zoom(&mut self, factor: f32) {
        self.distance = (self.distance * factor).clamp(0.05, 1e5);
    }

    /// Slides the target with the view plane so that the scene follows a drag of `delta_px`.
    pub fn pan(&mut self, delta_px: [f32; 2], height_px: f32) {
        let world_per_px = 2.0 * self.distance * (FOV_Y_RAD / 2.0).tan() / height_px.max(1.0);
        let forward = (self.target - self.eye()).normalize_or_zero();
        let right = forward.cross(Vec3::Y).normalize_or_zero();
        let up = right.cross(forward);
        self.target += (-delta_px[0] * right + delta_px[1] * up) * world_per_px;
    }

    /// Where a world point lands in a viewport of `size_px`, in pixels from its top left, or
    /// `None` behind the camera.
    pub fn project(&self, point: Vec3, size_px: [f32; 2]) -> Option<[f32; 2]> {
        let clip = self.view_proj(size_px[0] / size_px[1].max(1.0)) * Vec4::from((point, 1.0));
        (clip.w > 1e-6).then(|| {
            let ndc = clip.truncate() / clip.w;
            [
                (ndc.x + 1.0) / 2.0 * size_px[0],
                (1.0 - ndc.y) / 2.0 * size_px[1],
            ]
        })
    }
}
