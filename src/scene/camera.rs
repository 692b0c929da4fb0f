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
        let mut camera = Self {
            target: Vec3::ZERO,
            yaw_rad: -0.45,
            pitch_rad: 0.3,
            distance: 1.0,
        };
        // Every corner of the box, seen from this direction, must fall inside the field of
        // view: a corner `x` across, `y` up and `toward` nearer than the target fits at a
        // distance of at least |x| / (tan · aspect) + toward (and likewise for y), so a wide
        // box in a short viewport backs the camera off as far as it needs.
        let view = Mat4::look_at_rh(camera.eye(), Vec3::ZERO, Vec3::Y);
        let tan = (FOV_Y_RAD / 2.0).tan();
        let aspect = aspect.max(0.1);
        let mut needed: f32 = 0.0;
        for k in 0..8 {
            let sign = |bit: u32| if k & bit == 0 { -1.0 } else { 1.0 };
            let corner = half_extent * Vec3::new(sign(1), sign(2), sign(4));
            let seen = view.transform_point3(corner);
            // The camera sits 1 in front of the target: camera-space z of the target is -1.
            let toward = seen.z + 1.0;
            needed = needed
                .max(seen.x.abs() / (tan * aspect) + toward)
                .max(seen.y.abs() / tan + toward);
        }
        // A margin for the labels drawn beside the helices.
        camera.distance = (needed * 1.15).max(1.0);
        camera
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
