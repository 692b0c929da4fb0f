//! The RoPE corkscrew: its helices are RoPE's rotations, its scores depend only on the offset,
//! its pair lists parse as written, and the GPU draws each marker where the camera says.

use poslab::encoding::PairLayout;
use poslab::encoding::rope::{self, PairScore, RopeParams, pair_scores};
use poslab::engine::{Table, TableSpec, cpu};
use poslab::scene::camera::OrbitCamera;
use poslab::scene::corkscrew::{
    CorkscrewParams, CorkscrewScene, HelixVertex, PairSelection, ProbeVector, SceneLayout, build,
};

fn unit_scene(dim: usize, pairs: &[usize], first: u64, count: usize) -> CorkscrewScene {
    let query = ProbeVector::UnitPairs.values(dim, PairLayout::Interleaved);
    build(&CorkscrewParams {
        dim,
        base: 10_000.0,
        layout: PairLayout::Interleaved,
        pairs,
        first_position: first,
        position_count: count,
        query: &query,
        key: None,
    })
    .unwrap()
}

#[test]
fn helix_vertices_are_the_cpu_engines_rotations() {
    let (dim, first, count) = (16, 3, 40);
    let pairs = [0, 2, 7];
    let scene = unit_scene(dim, &pairs, first, count);
    let Table::Real(angles) = cpu::compute(&TableSpec::RopeAngles {
        params: RopeParams {
            seq: count,
            dim,
            base: 10_000.0,
            start: first,
        },
        freqs: Default::default(),
    })
    .unwrap() else {
        panic!("a real table")
    };
    for (helix, &pair) in scene.helices.iter().zip(&pairs) {
        assert_eq!(helix.pair, pair);
        let vertices = &scene.vertices[helix.vertices.clone()];
        assert_eq!(vertices.len(), (count - 1) * helix.substeps + 1);
        for step in 0..count {
            let v = vertices[step * helix.substeps];
            let angle = angles[[step, pair]];
            let expected = [step as f64, angle.cos(), angle.sin()];
            for (got, want) in v.position.iter().zip(expected) {
                assert!(
                    (f64::from(*got) - want).abs() <= 1e-6,
                    "pair {pair} position {}: {:?} vs {expected:?}",
                    first + step as u64,
                    v.position
                );
            }
        }
        // Between integer positions the curve stays on the unit circle.
        for v in vertices {
            let r = f64::from(v.position[1]).hypot(f64::from(v.position[2]));
            assert!((r - 1.0).abs() < 1e-6);
        }
    }
    // The fastest pair (θ_0 = 1 rad per position) gets extra vertices, the slow ones none.
    assert!(scene.helices[0].substeps >= 4);
    assert_eq!(scene.helices[2].substeps, 1);
}

#[test]
fn helices_follow_the_layouts_pairing_of_the_query() {
    let dim = 8;
    let query: Vec<f64> = (0..dim).map(|d| 1.0 + d as f64).collect();
    for layout in [PairLayout::Interleaved, PairLayout::Half] {
        let scene = build(&CorkscrewParams {
            dim,
            base: 100.0,
            layout,
            pairs: &[1, 3],
            first_position: 0,
            position_count: 5,
            query: &query,
            key: None,
        })
        .unwrap();
        // The rope-apply table of the CPU engine rotates the same vector at every position.
        let input = ndarray::Array2::from_shape_fn((5, dim), |(_, d)| query[d]);
        let Table::Real(rotated) = cpu::compute(&TableSpec::RopeApply {
            input,
            layout,
            base: 100.0,
            start: 0,
            freqs: Default::default(),
        })
        .unwrap() else {
            panic!("a real table")
        };
        for helix in &scene.helices {
            let (a, b) = layout.pair(helix.pair, dim);
            assert!((helix.radius - query[a].hypot(query[b])).abs() < 1e-12);
            for p in 0..5 {
                let v = scene.vertices[helix.vertices.start + p * helix.substeps].position;
                assert!(
                    (f64::from(v[1]) - rotated[[p, a]]).abs() < 1e-5,
                    "{layout:?}"
                );
                assert!(
                    (f64::from(v[2]) - rotated[[p, b]]).abs() < 1e-5,
                    "{layout:?}"
                );
            }
        }
    }
}

#[test]
fn bad_scenes_are_refused_with_the_reason() {
    let query = vec![1.0; 8];
    let params = |pairs: &'static [usize], count| CorkscrewParams {
        dim: 8,
        base: 10_000.0,
        layout: PairLayout::Half,
        pairs,
        first_position: 0,
        position_count: count,
        query: &query,
        key: None,
    };
    let error = build(&params(&[4], 10)).unwrap_err().to_string();
    assert!(error.contains("pairs run from 0 to 3"), "{error}");
    let error = build(&params(&[0], 0)).unwrap_err().to_string();
    assert!(error.contains("positions"), "{error}");
    let error = build(&params(&[], 10)).unwrap_err().to_string();
    assert!(error.contains("1 to 64 pairs"), "{error}");
}

fn total(scores: &[PairScore]) -> f64 {
    scores.iter().map(|s| s.score).sum()
}

#[test]
fn the_score_depends_only_on_the_offset() {
    let dim = 64;
    for layout in [PairLayout::Interleaved, PairLayout::Half] {
        let query = ProbeVector::Random(3).values(dim, layout);
        let key = ProbeVector::Random(4).values(dim, layout);
        let reference = total(&pair_scores(&query, &key, layout, 10_000.0, 9, 2).unwrap());
        for shift in [1u64, 17, 1000, 65_536, 1 << 20] {
            let shifted =
                pair_scores(&query, &key, layout, 10_000.0, 9 + shift, 2 + shift).unwrap();
            assert!(
                (total(&shifted) - reference).abs() < 1e-6,
                "{layout:?} shift {shift}: {} vs {reference}",
                total(&shifted)
            );
        }
        // And it is the closed form Σ |q_i||k_i| cos((m - n) θ_i + φ_q - φ_k).
        let theta = rope::inv_freq(dim, 10_000.0).unwrap();
        let closed: f64 = (0..dim / 2)
            .map(|i| {
                let (a, b) = layout.pair(i, dim);
                let (rq, pq) = (query[a].hypot(query[b]), query[b].atan2(query[a]));
                let (rk, pk) = (key[a].hypot(key[b]), key[b].atan2(key[a]));
                rq * rk * (7.0 * theta[i] + pq - pk).cos()
            })
            .sum();
        assert!((closed - reference).abs() < 1e-9, "{closed} vs {reference}");
    }
}

#[test]
fn unit_pairs_score_the_cosine_sum() {
    // With (1, 0) in every pair, q_m · k_n = Σ_i cos((m - n) θ_i).
    let dim = 32;
    let layout = PairLayout::Half;
    let v = ProbeVector::UnitPairs.values(dim, layout);
    let scores = pair_scores(&v, &v, layout, 500_000.0, 40, 15).unwrap();
    let theta = rope::inv_freq(dim, 500_000.0).unwrap();
    for (score, t) in scores.iter().zip(theta.iter()) {
        assert!((score.score - (25.0 * t).cos()).abs() < 1e-12);
    }
}

#[test]
fn pair_lists_parse_as_written() {
    assert_eq!(PairSelection::All.pairs(4).unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(PairSelection::EveryKth(3).pairs(8).unwrap(), vec![0, 3, 6]);
    assert_eq!(
        PairSelection::List("5, 0 2-3,3".into()).pairs(8).unwrap(),
        vec![0, 2, 3, 5]
    );
    for (bad, names) in [
        ("8", "'8'"),
        ("x", "'x'"),
        ("3-1", "'3-1'"),
        ("", "list at least one pair"),
    ] {
        let error = PairSelection::List(bad.into())
            .pairs(8)
            .unwrap_err()
            .to_string();
        assert!(error.contains(names), "{bad}: {error}");
        assert!(error.contains("0 to 7"), "{bad}: {error}");
    }
    assert!(PairSelection::EveryKth(0).pairs(8).is_err());
}

#[test]
fn the_camera_looks_at_its_target_and_zooms_and_orbits() {
    let mut camera = OrbitCamera::framing(glam::Vec3::new(10.0, 4.0, 1.0), 1.5);
    let size = [600.0, 400.0];
    let center = camera.project(glam::Vec3::ZERO, size).unwrap();
    assert!((center[0] - 300.0).abs() < 1e-3 && (center[1] - 200.0).abs() < 1e-3);
    // The framed box's ends are inside the viewport.
    for x in [-10.0, 10.0] {
        let [px, py] = camera.project(glam::Vec3::new(x, 0.0, 0.0), size).unwrap();
        assert!(
            (0.0..600.0).contains(&px) && (0.0..400.0).contains(&py),
            "{px} {py}"
        );
    }
    let distance = camera.eye().distance(camera.target);
    camera.zoom(0.5);
    assert!((camera.eye().distance(camera.target) - distance * 0.5).abs() < 1e-3);
    camera.orbit([0.0, 1e6], 400.0);
    assert!(camera.pitch_rad <= 1.5, "pitch stays off the pole");
}

/// The GPU draws every marker where the CPU's layout and camera put it.
#[test]
fn markers_land_where_the_camera_projects_them() {
    use poslab::widgets::canvas3d::{CanvasFrame, CanvasRenderer, read_picture};
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(wgpu::util::initialize_adapter_from_env_or_default(
        &instance, None,
    ))
    .unwrap_or_else(|e| panic!("GPU tests need an adapter (on Debian: mesa-vulkan-drivers): {e}"));
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .unwrap();
    let mut renderer = CanvasRenderer::new(&device, &adapter, wgpu::TextureFormat::Rgba8Unorm);

    let scene = std::sync::Arc::new(unit_scene(16, &[0, 3, 6], 0, 64));
    let layout = SceneLayout::of(&scene);
    let size_px = [480u32, 320u32];
    let camera = OrbitCamera::framing(layout.half_extent(), 1.5);
    let colors = [
        egui::Color32::from_rgb(255, 0, 0),
        egui::Color32::from_rgb(0, 255, 0),
        egui::Color32::from_rgb(0, 0, 255),
    ];
    let markers: Vec<HelixVertex> = scene
        .helices
        .iter()
        .enumerate()
        .map(|(index, helix)| {
            let angle = 20.0 * helix.theta;
            HelixVertex {
                position: [20.0, angle.cos() as f32, angle.sin() as f32],
                helix: index as u32,
            }
        })
        .collect();
    let frame = CanvasFrame {
        scene: scene.clone(),
        scene_id: 1,
        camera,
        colors: colors.to_vec(),
        axis_color: egui::Color32::from_gray(60),
        background: egui::Color32::BLACK,
        markers: markers.clone(),
        marker_radius_px: 6.0,
        size_px,
    };
    let mut encoder = device.create_command_encoder(&Default::default());
    renderer.render(&device, &queue, &mut encoder, &frame);
    queue.submit([encoder.finish()]);
    let picture = renderer.picture().expect("a picture was rendered");
    let (width, height, pixels) = read_picture(&device, &queue, picture).unwrap();
    assert_eq!([width, height], size_px);
    let pixel = |x: f32, y: f32| {
        let i = (y as usize * width as usize + x as usize) * 4;
        [pixels[i], pixels[i + 1], pixels[i + 2]]
    };
    for (index, marker) in markers.iter().enumerate() {
        let world = layout.world(index, marker.position);
        let [x, y] = camera
            .project(world, [width as f32, height as f32])
            .expect("in front of the camera");
        let [r, g, b, _] = colors[index].to_array();
        assert_eq!(pixel(x, y), [r, g, b], "marker {index} at ({x}, {y})");
    }
    // The corners are background.
    assert_eq!(pixel(1.0, 1.0), [0, 0, 0]);
    assert_eq!(pixel(width as f32 - 2.0, height as f32 - 2.0), [0, 0, 0]);
}

#[test]
fn a_different_key_has_helices_of_its_own_through_its_rings() {
    let dim = 8;
    let query: Vec<f64> = (0..dim).map(|d| 1.0 + d as f64).collect();
    let key: Vec<f64> = (0..dim).map(|d| (d as f64 * 0.7).sin() * 2.0).collect();
    let pairs = [0, 2, 3];
    let scene = build(&CorkscrewParams {
        dim,
        base: 100.0,
        layout: PairLayout::Interleaved,
        pairs: &pairs,
        first_position: 5,
        position_count: 20,
        query: &query,
        key: Some(&key),
    })
    .unwrap();
    assert_eq!(scene.key_helices.len(), pairs.len());
    // At each integer position n, the key helix passes through the key rotated by n θ_i:
    // (k_a cos - k_b sin, k_a sin + k_b cos), written out here.
    for (helix, &pair) in scene.key_helices.iter().zip(&pairs) {
        let theta = 100f64.powf(-((2 * pair) as f64) / dim as f64);
        let (ka, kb) = (key[2 * pair], key[2 * pair + 1]);
        for step in 0..20 {
            let n = (5 + step) as f64;
            let v = scene.vertices[helix.vertices.start + step * helix.substeps];
            let expected = [
                ka * (n * theta).cos() - kb * (n * theta).sin(),
                ka * (n * theta).sin() + kb * (n * theta).cos(),
            ];
            assert!(v.helix & poslab::scene::corkscrew::KEY_LINE_FLAG != 0);
            assert!(
                (f64::from(v.position[1]) - expected[0]).abs() < 1e-5
                    && (f64::from(v.position[2]) - expected[1]).abs() < 1e-5,
                "pair {pair} at {n}: {:?} vs {expected:?}",
                v.position
            );
        }
    }
    // The same key as the query adds nothing.
    let same = build(&CorkscrewParams {
        dim,
        base: 100.0,
        layout: PairLayout::Interleaved,
        pairs: &pairs,
        first_position: 5,
        position_count: 20,
        query: &query,
        key: Some(&query),
    })
    .unwrap();
    assert!(same.key_helices.is_empty());
}
