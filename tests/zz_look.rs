use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use poslab::app::{PoslabApp, wgpu_setup};
use poslab::egui::accesskit::Role;
#[test]
fn look() {
    let views = std::env::var("LOOK_VIEWS").unwrap_or("Sinusoidal table".into());
    let setup = std::env::var("LOOK_SETUP").unwrap_or_default();
    for view in views.split(';') {
        let mut harness = Harness::builder()
            .with_size([1280.0, 800.0])
            .wgpu_setup(wgpu_setup())
            .build_eframe(|cc| PoslabApp::new(cc).hide_machine_details());
        harness.run();
        harness.get_by_label(view).click();
        harness.run();
        for step in setup.split(';').filter(|s| !s.is_empty()) {
            if let Some((label, value)) = step.split_once('=') {
                harness
                    .get_by_role_and_label(Role::Slider, label)
                    .set_value_accesskit(value.parse().unwrap());
            } else {
                harness.get_by_label(step).click();
            }
            harness.run();
        }
        harness.run();
        let image = harness.render().unwrap();
        image
            .save(format!(
                "/tmp/shots/{}.png",
                view.replace(' ', "_").replace('/', "_")
            ))
            .unwrap();
    }
}
