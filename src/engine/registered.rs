//! Table kinds that live in a module of their own (`table_args::kinds::*`, one file per kind):
//! what the engine asks of such a kind, as a trait, so that adding one changes nothing here.
//! The CPU engine computes them element by element; the GPU engine refuses them (a kind that
//! needs a kernel is written into [`super::TableSpec`] and the GPU plan instead).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::ValueKind;
use crate::encoding::ParamError;

/// One element of a table as a function of its `[head, row, col]` index.
pub type Element<'a, T> = Box<dyn Fn(usize, usize, usize) -> T + Send + Sync + 'a>;

/// A table's elements, real or index.
pub enum Values<'a> {
    Real(Element<'a, f64>),
    Index(Element<'a, i32>),
}

/// What a kind in a module of its own tells the engine: its name, checks, shape and values.
pub trait RegisteredKind: fmt::Debug + SameAs + Send + Sync + 'static {
    /// The name of the kind, as `poslab table` spells it.
    fn kind_name(&self) -> &'static str;
    /// Checks every parameter; the shape and the values rely on it.
    fn validate(&self) -> Result<(), ParamError>;
    /// The length of each axis (1 to 3 of them); `None` when one overflows.
    fn axes(&self) -> Option<Vec<usize>>;
    fn value_kind(&self) -> ValueKind {
        ValueKind::Real
    }
    /// The options that set the table's size, for messages about tables too large.
    fn size_options(&self) -> &'static str;
    /// Why only the CPU engine computes it, for the GPU engine's refusal.
    fn cpu_only_reason(&self) -> &'static str;
    /// The element function of a validated table, with whatever it needs computed once.
    fn values(&self) -> Values<'_>;
    /// The `poslab table` options that make this table, as words (`--heads`, `8`, ...);
    /// `None` when no options describe it.
    fn option_words(&self) -> Option<Vec<String>>;
}

/// Equality between two kinds behind the trait (the app compares specifications to know
/// whether a table is still the one asked for); implemented for every `PartialEq` type.
pub trait SameAs {
    fn as_any(&self) -> &dyn Any;
    fn same_as(&self, other: &dyn Any) -> bool;
}

impl<T: PartialEq + Any> SameAs for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_as(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }
}

/// A table of a registered kind, as [`super::TableSpec::Registered`] holds it.
#[derive(Clone)]
pub struct RegisteredTable(Arc<dyn RegisteredKind>);

impl RegisteredTable {
    pub fn new(kind: impl RegisteredKind) -> Self {
        Self(Arc::new(kind))
    }

    pub fn kind(&self) -> &dyn RegisteredKind {
        self.0.as_ref()
    }

    /// The parameters as their own type, when they are of type `T`.
    pub fn downcast<T: Any>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }
}

impl PartialEq for RegisteredTable {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_as(other.0.as_any())
    }
}

impl fmt::Debug for RegisteredTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
