//! The collapsible "What am I looking at?" panel drawn above a view: its formula, how to read
//! it, its convention and things to try. Closed by default, so that it costs the view one line.

/// One view's explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explanation {
    /// The formula of what is drawn, in plain Unicode.
    pub formula: &'static str,
    /// What each axis and the colour mean.
    pub reading: &'static str,
    /// Which convention is shown and which reference implementation it matches.
    pub convention: &'static str,
    /// Things to try, each one sentence.
    pub try_these: &'static [&'static str],
}

/// The header's text (tests find the panel by it).
pub const HEADER: &str = "What am I looking at?";

/// Draws `explanation` in a collapsible panel whose open state is kept per `id`.
pub fn explainer_ui(ui: &mut egui::Ui, id: &str, explanation: &Explanation) {
    egui::CollapsingHeader::new(HEADER)
        .id_salt(("explainer", id))
        .default_open(false)
        .show(ui, |ui| {
            // Bounded, so that an open panel never takes the view's whole height.
            egui::ScrollArea::vertical()
                .max_height(ui.available_height().min(240.0))
                .auto_shrink([false, true])
                .show(ui, |ui| {
                    egui::Grid::new("explainer_grid")
                        .num_columns(2)
                        .spacing([12.0, 6.0])
                        .show(ui, |ui| {
                            let row = |ui: &mut egui::Ui, name: &str, text: egui::RichText| {
                                ui.strong(name);
                                ui.add(egui::Label::new(text).wrap());
                                ui.end_row();
                            };
                            row(
                                ui,
                                "Formula",
                                egui::RichText::new(explanation.formula).monospace(),
                            );
                            row(ui, "Reading it", egui::RichText::new(explanation.reading));
                            row(
                                ui,
                                "Convention",
                                egui::RichText::new(explanation.convention),
                            );
                            ui.strong("Try");
                            ui.vertical(|ui| {
                                for idea in explanation.try_these {
                                    ui.add(egui::Label::new(format!("• {idea}")).wrap());
                                }
                            });
                            ui.end_row();
                        });
                });
        });
}
