// A finished offscreen picture copied into egui's render pass, inside a paint callback's viewport.

// One triangle that covers the viewport.
struct BlitOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@group(0) @binding(0) var picture: texture_2d<f32>;
@group(0) @binding(1) var picture_sampler: sampler;

@vertex
fn vs_blit(@builtin(vertex_index) index: u32) -> BlitOut {
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    var out: BlitOut;
    out.clip = vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, 0.0, 1.0);
    out.uv = uv;
    return out;
}

// The picture holds sRGB-encoded colours (as egui's own textures do); an sRGB target encodes
// on write, so it gets them decoded first.
@fragment
fn fs_blit(in: BlitOut) -> @location(0) vec4<f32> {
    return textureSample(picture, picture_sampler, in.uv);
}

@fragment
fn fs_blit_to_srgb(in: BlitOut) -> @location(0) vec4<f32> {
    let c = textureSample(picture, picture_sampler, in.uv);
    let low = c.rgb / 12.92;
    let high = pow((c.rgb + 0.055) / 1.055, vec3<f32>(2.4));
    return vec4<f32>(select(high, low, c.rgb <= vec3<f32>(0.04045)), c.a);
}
