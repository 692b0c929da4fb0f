//! The one number box of the views: a slider, or a drag value, whose typed number is applied
//! when editing ends (Enter or leaving the box), never keystroke by keystroke, so that typing
//! 32 never computes a table of 3 first; Escape keeps the value it had. A typed number beyond
//! the control's range is set to the nearest end, and a note floating below the box says so
//! (without moving any control), as does text that is no number. (The side panel's rows, [`NumberRow`], add a
//! reset button and evenness to the same behaviour.)

use std::cell::RefCell;
use std::ops::RangeInclusive;
use std::rc::Rc;

use eframe::emath::Numeric;

use crate::options::ranges::format_number;

enum Inner<'a> {
    Slider(egui::Slider<'a>),
    Drag(egui::DragValue<'a>),
}

/// Reads (`None`) or sets (`Some`) the number a box edits, returning it.
type GetSet<'a> = Rc<RefCell<Box<dyn FnMut(Option<f64>) -> f64 + 'a>>>;

/// A slider or drag value that applies typed numbers when editing ends (see the module).
pub struct NumberBox<'a> {
    inner: Inner<'a>,
    value: GetSet<'a>,
    /// The range as numbers, for the note on a typed value outside it.
    range: Option<(f64, f64)>,
    label: String,
}

/// What the parser saw typed: a number, or text that is none.
#[derive(Clone)]
enum Typed {
    Number(f64),
    NotANumber(String),
}

impl<'a> NumberBox<'a> {
    /// A slider over `range` with a number box beside it.
    pub fn slider<Num: Numeric>(value: &'a mut Num, range: RangeInclusive<Num>) -> Self {
        let bounds = (range.start().to_f64(), range.end().to_f64());
        let value = get_set(value);
        let shared = value.clone();
        let mut slider =
            egui::Slider::from_get_set(bounds.0..=bounds.1, move |v| (shared.borrow_mut())(v));
        if Num::INTEGRAL {
            slider = slider.integer();
        }
        Self {
            inner: Inner::Slider(slider),
            value,
            range: Some(bounds),
            label: String::new(),
        }
    }

    /// A number box that dragging changes.
    pub fn drag<Num: Numeric>(value: &'a mut Num) -> Self {
        let value = get_set(value);
        let shared = value.clone();
        let mut drag = egui::DragValue::from_get_set(move |v| (shared.borrow_mut())(v));
        if Num::INTEGRAL {
            drag = drag.max_decimals(0).range(Num::MIN..=Num::MAX);
        }
        Self {
            inner: Inner::Drag(drag),
            value,
            range: None,
            label: String::new(),
        }
    }

    fn map(
        mut self,
        slider: impl FnOnce(egui::Slider<'a>) -> egui::Slider<'a>,
        drag: impl FnOnce(egui::DragValue<'a>) -> egui::DragValue<'a>,
    ) -> Self {
        self.inner = match self.inner {
            Inner::Slider(s) => Inner::Slider(slider(s)),
            Inner::Drag(d) => Inner::Drag(drag(d)),
        };
        self
    }

    /// The slider's label (a drag value has none: give it a prefix).
    pub fn text(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        self.label = text.clone();
        self.map(|s| s.text(text), |d| d)
    }

    pub fn logarithmic(self, logarithmic: bool) -> Self {
        self.map(|s| s.logarithmic(logarithmic), |d| d)
    }

    pub fn step_by(self, step: f64) -> Self {
        self.map(|s| s.step_by(step), |d| d)
    }

    pub fn prefix(mut self, prefix: impl ToString) -> Self {
        let prefix = prefix.to_string();
        if self.label.is_empty() {
            self.label = prefix.trim().to_owned();
        }
        self.map(|s| s.prefix(prefix.clone()), |d| d.prefix(prefix.clone()))
    }

    pub fn suffix(self, suffix: impl ToString) -> Self {
        let suffix = suffix.to_string();
        self.map(|s| s.suffix(suffix.clone()), |d| d.suffix(suffix.clone()))
    }

    /// A drag value's range (a slider's is given when it is made).
    pub fn range<Num: Numeric>(mut self, range: RangeInclusive<Num>) -> Self {
        self.range = Some((range.start().to_f64(), range.end().to_f64()));
        self.map(|s| s, |d| d.range(range))
    }

    pub fn speed(self, speed: impl Into<f64>) -> Self {
        let speed = speed.into();
        self.map(|s| s, |d| d.speed(speed))
    }

    pub fn custom_formatter(
        self,
        formatter: impl 'a + Fn(f64, RangeInclusive<usize>) -> String,
    ) -> Self {
        self.map(|s| s, |d| d.custom_formatter(formatter))
    }
}

impl egui::Widget for NumberBox<'_> {
    fn ui(self, ui: &mut egui::Ui) -> egui::Response {
        // Not the response's id: a slider's changes while its box is typed into. Boxes in one
        // row are told apart by their labels.
        let note_id = ui.scope_id().with(("typed value note", self.label.clone()));
        let typed: Rc<RefCell<Option<Typed>>> = Rc::default();
        let seen = typed.clone();
        let parser = move |text: &str| {
            let cleaned: String = text
                .chars()
                .filter(|c| !matches!(c, '_' | ' ' | ','))
                .collect();
            match cleaned.parse::<f64>() {
                Ok(v) if v.is_finite() => {
                    *seen.borrow_mut() = Some(Typed::Number(v));
                    Some(v)
                }
                _ => {
                    *seen.borrow_mut() = Some(Typed::NotANumber(text.trim().to_owned()));
                    None
                }
            }
        };
        let before = (self.value.borrow_mut())(None);
        let response = match self.inner {
            Inner::Slider(s) => ui.add(s.update_while_editing(false).custom_parser(parser)),
            Inner::Drag(d) => ui.add(d.update_while_editing(false).custom_parser(parser)),
        };
        if let Some(kept) = kept_on_escape(ui, note_id, &response, before) {
            (self.value.borrow_mut())(Some(kept));
            let _ = typed.borrow_mut().take();
        }
        let what = if self.label.is_empty() {
            "value".to_owned()
        } else {
            self.label.to_lowercase()
        };
        let typed = typed.borrow().clone();
        match typed {
            Some(Typed::Number(value)) => {
                let note = self.range.and_then(|(low, high)| {
                    if value < low {
                        Some(format!(
                            "{} is below the smallest {what}, {}: set to {}",
                            number(value),
                            number(low),
                            number(low)
                        ))
                    } else if value > high {
                        Some(format!(
                            "{} is above the largest {what}, {}: set to {}",
                            number(value),
                            number(high),
                            number(high)
                        ))
                    } else {
                        None
                    }
                });
                ui.data_mut(|d| match note {
                    Some(note) => {
                        d.insert_temp(note_id, note);
                    }
                    None => d.remove::<String>(note_id),
                });
            }
            Some(Typed::NotANumber(text)) => ui.data_mut(|d| {
                d.insert_temp(
                    note_id,
                    format!("\"{text}\" is not a number: kept the {what}"),
                );
            }),
            // Moved by dragging: an old note no longer applies.
            None if response.changed() => ui.data_mut(|d| d.remove::<String>(note_id)),
            None => {}
        }
        note_ui(ui, note_id, &response);
        response
    }
}

/// Shows the note kept under `note_id` (why a typed value was changed or refused) floating just
/// below the box that `response` is, over what lies there rather than pushing it aside: a
/// message never moves the control the pointer is on its way to. It takes no clicks (a click
/// lands on the control under it) and a press anywhere but on the box dismisses it.
fn note_ui(ui: &egui::Ui, note_id: egui::Id, response: &egui::Response) {
    let Some(note) = ui.data(|d| d.get_temp::<String>(note_id)) else {
        return;
    };
    if ui.input(|i| i.pointer.any_pressed()) && !response.contains_pointer() {
        ui.data_mut(|d| d.remove::<String>(note_id));
        return;
    }
    egui::Area::new(note_id.with("floating"))
        .order(egui::Order::Tooltip)
        .fixed_pos(response.rect.left_bottom() + egui::vec2(0.0, 2.0))
        .interactable(false)
        .constrain(true)
        .show(ui.ctx(), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(360.0);
                ui.colored_label(ui.visuals().warn_fg_color, note);
            });
        });
}

/// The value a box had when Escape left it, to be given back on the frame after: egui skips the
/// typed text on the frame Escape is pressed, but applies it on the next one, when it sees the
/// focus lost. `id` is the box's own; `before` its value before this frame.
pub fn kept_on_escape(
    ui: &egui::Ui,
    id: egui::Id,
    response: &egui::Response,
    before: f64,
) -> Option<f64> {
    let escape_id = id.with("value before Escape");
    let kept = ui.data_mut(|d| d.remove_temp::<f64>(escape_id));
    if response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Escape)) {
        ui.data_mut(|d| d.insert_temp(escape_id, before));
        ui.ctx().request_repaint();
    }
    kept
}

/// Reads and sets `value` as an f64, as egui's widgets do.
fn get_set<'a, Num: Numeric>(value: &'a mut Num) -> GetSet<'a> {
    Rc::new(RefCell::new(Box::new(move |v: Option<f64>| {
        if let Some(v) = v {
            *value = Num::from_f64(v);
        }
        value.to_f64()
    })))
}

/// A number as a person reads it: whole numbers with thousands separated, others to 6
/// significant digits.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        let out = thousands(value.abs() as u64);
        if value < 0.0 { format!("-{out}") } else { out }
    } else {
        format!("{}", (value * 1e6).round() / 1e6)
    }
}

/// A one-line text box whose text applies when editing ends, like the number boxes: `value`
/// changes only on Enter or on leaving the box, never keystroke by keystroke (a half-typed
/// list is never read); Escape gives the box back its value. `salt` tells boxes of one view
/// apart. Returns the box's response, and whether `value` changed.
pub fn committed_text(
    ui: &mut egui::Ui,
    salt: &str,
    value: &mut String,
    style: impl FnOnce(egui::TextEdit<'_>) -> egui::TextEdit<'_>,
) -> (egui::Response, bool) {
    let id = ui.make_persistent_id(("committed text", salt));
    let buffer_id = id.with("being typed");
    let mut text = ui
        .data(|d| d.get_temp::<String>(buffer_id))
        .unwrap_or_else(|| value.clone());
    let response = ui.add(style(egui::TextEdit::singleline(&mut text).id(id)));
    let mut changed = false;
    if response.has_focus() {
        ui.data_mut(|d| d.insert_temp(buffer_id, text.clone()));
    } else {
        ui.data_mut(|d| d.remove::<String>(buffer_id));
        if response.lost_focus()
            && !ui.input(|i| i.key_pressed(egui::Key::Escape))
            && text != *value
        {
            *value = text;
            changed = true;
        }
    }
    (response, changed)
}

pub use crate::numbers::thousands;

/// A number that a slider and a typed value both edit.
pub trait SliderNumber: Copy + PartialEq {
    fn to_f64(self) -> f64;
    fn from_f64(value: f64) -> Self;
}

impl SliderNumber for usize {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(value: f64) -> Self {
        value.round().max(0.0) as usize
    }
}

impl SliderNumber for u64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(value: f64) -> Self {
        value.round().max(0.0) as u64
    }
}

impl SliderNumber for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(value: f64) -> Self {
        value
    }
}

/// A labelled slider whose number can be typed: the typed value is applied when editing ends,
/// checked against the range (and evenness), and when it had to change, a line under the slider
/// says what was typed, why it was not allowed and what is used instead. A reset button returns
/// to the default.
pub struct NumberRow<'a> {
    label: &'a str,
    tooltip: &'a str,
    default: f64,
    range: std::ops::RangeInclusive<f64>,
    even: bool,
    logarithmic: bool,
    unused: Option<&'static str>,
}

impl<'a> NumberRow<'a> {
    pub fn new(label: &'a str, default: f64, range: std::ops::RangeInclusive<f64>) -> Self {
        Self {
            label,
            tooltip: "",
            default,
            range,
            even: false,
            logarithmic: false,
            unused: None,
        }
    }

    pub fn tooltip(mut self, tooltip: &'a str) -> Self {
        self.tooltip = tooltip;
        self
    }

    /// Only even values (a dimension made of pairs).
    pub fn even(mut self) -> Self {
        self.even = true;
        self
    }

    pub fn logarithmic(mut self) -> Self {
        self.logarithmic = true;
        self
    }

    /// Disables the row, with `reason` as its tooltip.
    pub fn unused(mut self, reason: Option<&'static str>) -> Self {
        self.unused = reason;
        self
    }

    /// The value the row allows for a typed `value`, and why it differs, if it does.
    pub fn allowed(&self, value: f64) -> (f64, Option<String>) {
        crate::options::ranges::allowed(self.label, &self.range, self.even, value)
    }

    pub fn ui<T: SliderNumber>(self, ui: &mut egui::Ui, value: &mut T) -> egui::Response {
        let note_id = ui.scope_id().with(("typed value note", self.label));
        let typed = std::cell::Cell::new(None::<Result<f64, String>>);
        let mut number = value.to_f64();
        let before = number;
        let response = ui
            .add_enabled_ui(self.unused.is_none(), |ui| {
                ui.horizontal(|ui| {
                    // Room for the widest value any row takes (10⁷, or 1,048,576), so that a
                    // row keeps its width whatever it holds and the panel never jumps.
                    ui.spacing_mut().interact_size.x = ui.spacing().interact_size.x.max(64.0);
                    let mut slider = egui::Slider::new(&mut number, self.range.clone())
                        .text(self.label)
                        .logarithmic(self.logarithmic)
                        // The number box applies what is typed when editing ends, never a
                        // half-typed number.
                        .update_while_editing(false)
                        .custom_parser(|text| {
                            let cleaned: String =
                                text.chars().filter(|c| !matches!(c, '_' | ' ')).collect();
                            match cleaned.parse::<f64>() {
                                Ok(v) if v.is_finite() => {
                                    typed.set(Some(Ok(v)));
                                    Some(v)
                                }
                                _ => {
                                    typed.set(Some(Err(text.trim().to_owned())));
                                    None
                                }
                            }
                        });
                    if self.even {
                        slider = slider.step_by(2.0);
                    } else if T::from_f64(0.5).to_f64() != 0.5 {
                        slider = slider.integer();
                    }
                    let response = ui.add(slider).on_hover_text(self.tooltip);
                    if ui
                        .add_enabled(number != self.default, egui::Button::new("reset").small())
                        .on_hover_text(format!(
                            "Reset to the default, {}",
                            format_number(self.default)
                        ))
                        .clicked()
                    {
                        number = self.default;
                    }
                    response
                })
                .inner
            })
            .inner;
        let response = match self.unused {
            Some(reason) => response.on_disabled_hover_text(reason),
            None => response,
        };
        if let Some(kept) = kept_on_escape(ui, note_id, &response, before) {
            number = kept;
            typed.set(None);
        }
        match typed.take() {
            Some(Ok(wanted)) => {
                let (allowed, why) = self.allowed(wanted);
                number = allowed;
                match why {
                    Some(why) => ui.data_mut(|d| {
                        d.insert_temp(note_id, format!("{why}: using {}", format_number(allowed)));
                    }),
                    None => ui.data_mut(|d| d.remove::<String>(note_id)),
                }
            }
            Some(Err(text)) => {
                let (low, high) = (*self.range.start(), *self.range.end());
                ui.data_mut(|d| {
                    d.insert_temp(
                        note_id,
                        format!(
                            "\"{text}\" is not a number: {} takes {} to {}; kept {}",
                            self.label,
                            format_number(low),
                            format_number(high),
                            format_number(before)
                        ),
                    )
                });
            }
            None if number != before => ui.data_mut(|d| d.remove::<String>(note_id)),
            None => {}
        }
        note_ui(ui, note_id, &response);
        let new = T::from_f64(number);
        if new != *value {
            *value = new;
        }
        response
    }
}
