// The RoPE corkscrew: helices as line strips, their axes as lines, the position markers as
// screen-space disks (filled for the query at m, rings for the key at n), all depth-tested.

// Keep in sync with `SceneUniform` in src/widgets/canvas3d.rs.
struct SceneUniform {
    view_proj: mat4x4<f32>,
    x_offset: f32,
    x_scale: f32,
    radius_scale: f32,
    marker_radius_px: f32,
    viewport_px: vec2<f32>,
    // Its first helix's y and the step to the next: helix k's axis lies at
    // first_axis_y - k * spacing (as `SceneLayout::axis_y`).
    first_axis_y: f32,
    spacing: f32,
    axis_color: vec4<f32>,
    colors: array<vec4<f32>, 64>,
}

@group(0) @binding(0) var<uniform> scene: SceneUniform;

// A vertex of `HelixVertex` (src/scene/corkscrew.rs), or of an axis line.
struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) helix: u32,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) corner: vec2<f32>,
    @location(2) @interpolate(flat) ring: u32,
}

const AXIS_FLAG: u32 = 0x80000000u;
const KEY_FLAG: u32 = 0x80000000u;
// A vertex of a key's helix: drawn in its pair's colour, fainter. Keep in sync with
// KEY_LINE_FLAG in src/scene/corkscrew.rs.
const KEY_LINE_FLAG: u32 = 0x40000000u;

fn world(index: u32, p: vec3<f32>) -> vec4<f32> {
    let axis_y = scene.first_axis_y - f32(index) * scene.spacing;
    return vec4<f32>(
        p.x * scene.x_scale + scene.x_offset,
        p.y * scene.radius_scale + axis_y,
        p.z * scene.radius_scale,
        1.0,
    );
}

@vertex
fn vs_line(v: VertexIn) -> VertexOut {
    let index = v.helix & ~(AXIS_FLAG | KEY_LINE_FLAG);
    var out: VertexOut;
    out.clip = scene.view_proj * world(index, v.position);
    if (v.helix & AXIS_FLAG) != 0u {
        out.color = scene.axis_color;
    } else if (v.helix & KEY_LINE_FLAG) != 0u {
        out.color = vec4<f32>(scene.colors[index].rgb * 0.55, scene.colors[index].a);
    } else {
        out.color = scene.colors[index];
    }
    out.corner = vec2<f32>(0.0);
    out.ring = 0u;
    return out;
}

@fragment
fn fs_line(in: VertexOut) -> @location(0) vec4<f32> {
    return in.color;
}

// Two triangles per marker, stretched to a square of the marker's size on screen.
@vertex
fn vs_marker(@builtin(vertex_index) corner_index: u32, marker: VertexIn) -> VertexOut {
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
    );
    let corner = corners[corner_index];
    let index = marker.helix & ~KEY_FLAG;
    let center = scene.view_proj * world(index, marker.position);
    let offset = corner * scene.marker_radius_px * 2.0 / scene.viewport_px * center.w;
    var out: VertexOut;
    out.clip = center + vec4<f32>(offset, 0.0, 0.0);
    // Slightly in front, so that a marker is not half hidden by its own helix.
    out.clip.z = max(out.clip.z - 0.002 * out.clip.w, 0.0);
    out.corner = corner;
    out.ring = select(0u, 1u, (marker.helix & KEY_FLAG) != 0u);
    if out.ring == 1u {
        out.color = vec4<f32>(1.0, 1.0, 1.0, 1.0);
    } else {
        out.color = scene.colors[index];
    }
    return out;
}

@fragment
fn fs_marker(in: VertexOut) -> @location(0) vec4<f32> {
    let r = length(in.corner);
    if r > 1.0 || (in.ring == 1u && r < 0.6) {
        discard;
    }
    // A dark rim keeps a filled marker visible on its own helix's colour.
    if in.ring == 0u && r > 0.72 {
        return vec4<f32>(0.05, 0.05, 0.05, 1.0);
    }
    return in.color;
}
