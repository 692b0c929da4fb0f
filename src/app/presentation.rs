//! How the app looks and how a presenter drives it: the light or dark theme, presentation mode
//! (the whole window zoomed for a projector, the light theme, the controls folded away) and the
//! keys a lecture uses: F5 and Esc, Ctrl+B for the controls, Page Down and Page Up through a
//! view's steps and then the views (what a presenter's remote sends).

use serde::{Deserialize, Serialize};

pub use crate::ui::theme::ThemeChoice;

/// How wide the window is in points while presenting: the type and lines of a 1280-pixel
/// window grow by a quarter, those of a 1920-pixel one by seven eighths, so that a slide reads
/// the same from the back of a room whatever the projector's resolution.
pub const PRESENT_WIDTH_POINTS: f32 = 1024.0;

/// Presentation mode never zooms by less than this.
pub const PRESENT_MIN_ZOOM: f32 = 1.25;

/// The look of the window, kept between runs (presenting and folded controls are not: the app
/// opens as a desk tool unless `--present` says otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Appearance {
    pub theme: ThemeChoice,
    /// Presentation mode.
    #[serde(skip)]
    pub present: bool,
    /// The side panel folded away, so that the view fills the window.
    #[serde(skip)]
    pub controls_hidden: bool,
    /// The theme and zoom before presenting, given back when it ends.
    #[serde(skip)]
    before_present: Option<(ThemeChoice, f32)>,
    /// The zoom at a desk (Ctrl+ and Ctrl-), given back at the next start: egui keeps the last
    /// zoom it had, which after quitting while presenting is presentation mode's.
    pub desk_zoom: Option<f32>,
    /// The desk's zoom being given back after presentation mode, and for how many more
    /// frames it is enforced: egui takes a zoom at the next frame and ignores one equal to
    /// the zoom it has, so presentation's zoom, still pending when presentation ended (F5
    /// twice in quick succession), would otherwise land after the desk's and stay.
    #[serde(skip)]
    restoring: Option<(f32, u8)>,
}

impl Appearance {
    /// Starts or ends presentation mode: the light theme and folded controls on, then what was
    /// there before.
    pub fn set_presenting(&mut self, ctx: &egui::Context, present: bool) {
        if present == self.present {
            return;
        }
        self.present = present;
        if present {
            self.before_present = Some((self.theme, ctx.zoom_factor()));
            self.theme = ThemeChoice::Light;
            self.controls_hidden = true;
        } else {
            let (theme, zoom) = self.before_present.take().unwrap_or((self.theme, 1.0));
            self.theme = theme;
            self.controls_hidden = false;
            ctx.set_zoom_factor(zoom);
            self.desk_zoom = Some(zoom);
            self.restoring = Some((zoom, 3));
            ctx.request_repaint();
        }
    }

    /// What is kept for the next run: the theme chosen at a desk, not presentation mode's.
    pub fn at_rest(&self) -> Self {
        Self {
            theme: self.before_present.map_or(self.theme, |(theme, _)| theme),
            desk_zoom: self.before_present.map(|(_, zoom)| zoom).or(self.desk_zoom),
            ..Self::default()
        }
    }

    /// Sets egui's theme and, while presenting, its zoom, for this frame; at a desk, notes
    /// the zoom to give back at the next start.
    pub fn apply(&mut self, ctx: &egui::Context) {
        if ctx.theme() != self.theme.egui() {
            ctx.set_theme(self.theme.egui());
        }
        if !self.present {
            match self.restoring {
                Some((zoom, frames)) => {
                    if (ctx.zoom_factor() - zoom).abs() > 0.005 {
                        ctx.set_zoom_factor(zoom);
                    }
                    self.restoring = frames.checked_sub(1).map(|left| (zoom, left));
                    ctx.request_repaint();
                }
                None => self.desk_zoom = Some(ctx.zoom_factor()),
            }
        } else {
            let zoom = presentation_zoom(ctx.content_rect().width() * ctx.zoom_factor());
            if (ctx.zoom_factor() - zoom).abs() > 0.005 {
                ctx.set_zoom_factor(zoom);
            }
        }
        // Both themes' styles: egui keeps one per theme.
        for theme in [egui::Theme::Dark, egui::Theme::Light] {
            let wanted = small_type_points(&ctx.style_of(theme), self.present);
            if egui::TextStyle::Small.resolve(&ctx.style_of(theme)).size != wanted {
                ctx.style_mut_of(theme, |style| {
                    if let Some(font) = style.text_styles.get_mut(&egui::TextStyle::Small) {
                        font.size = wanted;
                    }
                });
            }
        }
    }
}

/// The size of small type (captions, legends, colour-bar notes) at a desk, egui's own.
const DESK_SMALL_POINTS: f32 = 9.0;

/// Small type at a desk is egui's 9 points; while presenting it is as large as the body, so
/// that no caption or legend stays too small to read from the back of a room (the zoom alone
/// takes 9 points to 11 pixels).
fn small_type_points(style: &egui::Style, presenting: bool) -> f32 {
    if presenting {
        egui::TextStyle::Body.resolve(style).size
    } else {
        DESK_SMALL_POINTS
    }
}

/// The size of small type now, in points.
pub fn small_points(ctx: &egui::Context) -> f32 {
    egui::TextStyle::Small.resolve(&ctx.global_style()).size
}

/// The zoom that makes a window `unzoomed_width` points wide (at zoom 1) show
/// [`PRESENT_WIDTH_POINTS`], and never less than [`PRESENT_MIN_ZOOM`].
pub fn presentation_zoom(unzoomed_width: f32) -> f32 {
    (unzoomed_width / PRESENT_WIDTH_POINTS).max(PRESENT_MIN_ZOOM)
}

/// What a key asks of the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    TogglePresenting,
    StopPresenting,
    ToggleControls,
    /// The view's next step, or the next view after its last (Page Down).
    Forward,
    /// The view's previous step, or the previous view before its first (Page Up).
    Back,
    NextView,
    PreviousView,
}

/// The shortcuts, as the side panel's tooltips and the help name them.
pub const PRESENT_KEY: &str = "F5";
pub const CONTROLS_KEY: &str = "Ctrl+B";

/// The command the keys of this frame give, taking those keys. Page Up, Page Down and Esc are
/// left to a text box that has the keyboard; F5 and Ctrl+B work everywhere.
pub fn command(ctx: &egui::Context, presenting: bool) -> Option<Command> {
    use egui::{Key, KeyboardShortcut, Modifiers};
    let typing = ctx.memory(|m| m.focused().is_some());
    // Esc first closes a popup or leaves a text box; only then does it end presenting.
    let popup_open = egui::Popup::is_any_open(ctx);
    ctx.input_mut(|i| {
        let shortcuts = [
            (
                KeyboardShortcut::new(Modifiers::NONE, Key::F5),
                Command::TogglePresenting,
                true,
            ),
            (
                KeyboardShortcut::new(Modifiers::COMMAND, Key::B),
                Command::ToggleControls,
                true,
            ),
            (
                KeyboardShortcut::new(Modifiers::COMMAND, Key::PageDown),
                Command::NextView,
                !typing,
            ),
            (
                KeyboardShortcut::new(Modifiers::COMMAND, Key::PageUp),
                Command::PreviousView,
                !typing,
            ),
            (
                KeyboardShortcut::new(Modifiers::NONE, Key::PageDown),
                Command::Forward,
                !typing,
            ),
            (
                KeyboardShortcut::new(Modifiers::NONE, Key::PageUp),
                Command::Back,
                !typing,
            ),
            (
                KeyboardShortcut::new(Modifiers::NONE, Key::Escape),
                Command::StopPresenting,
                presenting && !typing && !popup_open,
            ),
        ];
        shortcuts
            .into_iter()
            .find(|(shortcut, _, allowed)| *allowed && i.consume_shortcut(shortcut))
            .map(|(_, command, _)| command)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presenting_zooms_with_the_window_and_never_below_the_floor() {
        assert_eq!(presentation_zoom(1280.0), PRESENT_MIN_ZOOM);
        assert_eq!(presentation_zoom(1920.0), 1.875);
        assert_eq!(presentation_zoom(3840.0), 3.75);
        assert_eq!(presentation_zoom(800.0), PRESENT_MIN_ZOOM);
    }
}
