"""Type stubs for poslab: exact tables of transformer positional encodings, and checks against
them. Every keyword option is the command line's long option with ``_`` for ``-``."""

import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

__version__: str

ArrayLike = Any
TableSource = Union[str, "os.PathLike[str]", ArrayLike]
OptionValue = Union[bool, int, float, str, List[Any], Tuple[Any, ...], np.ndarray, Dict[str, Any], Any]

def table(kind: str, **options: OptionValue) -> np.ndarray:
    """The table ``poslab table KIND`` writes, as a NumPy array of its shape and dtype."""

class BadCell:
    """One element outside the tolerance."""

    index: Tuple[int, ...]
    expected: float
    got: float
    error: float
    ulp: Optional[float]

class Verdict:
    """What ``poslab check`` found. ``bool(verdict)`` is ``verdict.matches``."""

    kind: str
    matches: bool
    equivalent: bool
    rule: str
    max_abs_error: float
    max_abs_index: Optional[Tuple[int, ...]]
    max_rel_error: float
    bad_count: int
    bad: List[BadCell]
    diagnosis: Optional[str]
    notes: List[str]
    text: str
    command: str
    def __bool__(self) -> bool: ...

def check(array: TableSource, kind: str, **options: OptionValue) -> Verdict:
    """Compares ``array`` with poslab's table of ``kind``: ``poslab check FILE --as KIND``."""

def assert_table(array: TableSource, kind: str, **options: OptionValue) -> Verdict:
    """:func:`check`, raising ``AssertionError`` with the report when it does not match."""

class Identification:
    """Which table an array holds, as ``poslab identify`` says. ``bool(r)`` is ``r.matches``."""

    matches: bool
    description: Optional[str]
    max_abs_error: float
    text: str
    notes: List[str]
    report: str
    runner_up: Optional["Identification"]
    command: str
    kind: Optional[str]
    options: Optional[Dict[str, Any]]
    def __bool__(self) -> bool: ...

def identify(array: TableSource, **options: OptionValue) -> Identification:
    """Says which table ``array`` holds: ``poslab identify FILE``."""

class RopeReport:
    """What :func:`assert_rope` found."""

    passes: bool
    max_abs_error: float
    rule: str
    worst: Optional[Dict[str, Any]]
    applied: Dict[str, Any]
    causes: List[str]
    text: str
    seconds: float
    seconds_in_function: float
    def __bool__(self) -> bool: ...

def assert_rope(
    fn: Callable[[Any, Any], Any],
    *,
    config: Any = ...,
    positions: Optional[ArrayLike] = ...,
    heads: int = ...,
    dtype: str = ...,
    framework: str = ...,
    device: str = ...,
    seed: int = ...,
    atol: Optional[float] = ...,
    **options: OptionValue,
) -> RopeReport:
    """Checks a RoPE rotation function at long positions, and names what is wrong with it."""

class PermutationReport:
    """What :func:`assert_permutation` found."""

    passes: bool
    wrong_heads: List[int]
    largest_change: float
    positions: List[Tuple[int, int]]
    causes: List[str]
    text: str
    def __bool__(self) -> bool: ...

def assert_permutation(
    permute: Callable[[Any, int], Any],
    *,
    heads: int,
    kv_heads: Optional[int] = ...,
    head_dim: int,
    hidden: Optional[int] = ...,
    direction: str = ...,
    seed: int = ...,
    framework: str = ...,
) -> PermutationReport:
    """Checks a function that reorders a projection's rows from one RoPE pair layout to the other."""

class RopeConfig:
    """A RoPE model's settings, as ``poslab config`` reads its ``config.json``."""

    options: Dict[str, Any]
    attention_factor: float
    sources: Dict[str, str]
    warnings: List[str]
    layer_type: Optional[str]
    layer_types: List[str]
    model: str
    text: str

def rope_config(config: Any, layer_type: Optional[str] = None) -> RopeConfig:
    """A RoPE model's settings from its ``config.json`` (a path, a dict, or a transformers config)."""

def rope_configs(config: Any) -> Dict[Optional[str], RopeConfig]:
    """Every RoPE of a model's ``config.json``, by layer type (``None`` for a model with one)."""
