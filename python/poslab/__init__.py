"""poslab: exact tables of transformer positional encodings, and checks against them.

The same engine as the ``poslab`` command line, called where tests run. Every option of the
command line is a keyword argument with ``_`` for ``-`` (``--rotary-dim 64`` is
``rotary_dim=64``; a switch such as ``--bidirectional`` is ``bidirectional=True``), with the
same meaning, default and messages: a bad kind, option or value raises ``ValueError`` with the
command line's own words, a file that cannot be read raises ``OSError``.

    >>> import poslab
    >>> cos = poslab.table("rope-cos", seq=4096, dim=128, base=500000)
    >>> poslab.assert_table(my_cache, "rope-cos", dim=128, base=500000)

Arrays are anything ``numpy.asarray`` takes, torch tensors on any device and of any float dtype
(bfloat16 and float16 widened exactly; the dtype stored is what the check's rules see), or a
path to a ``.npy``, ``.safetensors`` (with ``tensor=``) or ``.csv`` file.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _poslab

__version__ = _poslab.__version__

__all__ = [
    "table",
    "check",
    "assert_table",
    "identify",
    "Verdict",
    "BadCell",
    "Identification",
    "assert_rope",
    "RopeReport",
    "assert_permutation",
    "PermutationReport",
    "rope_config",
    "rope_configs",
    "RopeConfig",
]

# Float types the checks know, by the name NumPy, PyTorch and ml_dtypes give them.
_STORED = {"float64", "float32", "float16", "bfloat16"}


def _is_torch(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "detach")


def _as_table(array: Any) -> Tuple[str, Optional[np.ndarray], Optional[str]]:
    """The name, values (float64) and stored float type of a table handed to check/identify:
    a path is read by the library itself (values None)."""
    if isinstance(array, (str, os.PathLike)):
        path = os.fspath(array)
        # A file that cannot be opened is the OS's error, as Python says it.
        with open(path, "rb"):
            pass
        return os.path.abspath(path), None, None
    if _is_torch(array):
        tensor = array.detach()
        stored = str(tensor.dtype).replace("torch.", "")
        if tensor.is_complex():
            raise ValueError(f"a {stored} tensor is not a table of real values")
        # bfloat16 and float16 widen exactly to float32 (NumPy has no bfloat16).
        if tensor.is_floating_point() and stored != "float64":
            tensor = tensor.float()
        values = tensor.cpu().numpy()
        return "array", np.asarray(values, dtype=np.float64), (stored if stored in _STORED else None)
    values = np.asarray(array)
    stored = values.dtype.name
    if values.dtype.kind == "c":
        raise ValueError(f"a {stored} array is not a table of real values")
    if values.dtype.kind not in "fiub" and stored != "bfloat16":
        raise ValueError(f"a {stored} array is not a table of numbers")
    return "array", np.ascontiguousarray(values, dtype=np.float64), (stored if stored in _STORED else None)


class _Files:
    """Temporary files for option values the command line takes as files (arrays for
    ``positions=``, ``inv_freq=``, ``ids=``; a dict for ``config=``), removed afterwards."""

    def __init__(self) -> None:
        self.folder: Optional[tempfile.TemporaryDirectory] = None

    def __enter__(self) -> "_Files":
        return self

    def __exit__(self, *_: Any) -> None:
        if self.folder is not None:
            self.folder.cleanup()

    def _path(self, name: str) -> str:
        if self.folder is None:
            self.folder = tempfile.TemporaryDirectory(prefix="poslab-")
        return os.path.join(self.folder.name, name)

    def value(self, key: str, value: Any) -> Any:
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if isinstance(value, np.generic):
            return value.item()
        if _is_torch(value):
            tensor = value.detach().cpu()
            if tensor.ndim == 0:
                return tensor.item()
            value = tensor.float().numpy() if tensor.dtype.is_floating_point and str(tensor.dtype) != "torch.float64" else tensor.numpy()
        if isinstance(value, np.ndarray):
            if value.ndim == 0:
                return value.item()
            path = self._path(f"{key}.npy")
            np.save(path, np.ascontiguousarray(value))
            return path
        if isinstance(value, dict) or hasattr(value, "to_dict"):
            config = value.to_dict() if hasattr(value, "to_dict") else value
            path = self._path(f"{key}.json")
            with open(path, "w", encoding="utf-8") as file:
                json.dump(config, file)
            return path
        return value

    def options(self, options: Dict[str, Any]) -> Dict[str, Any]:
        # None is "not given", as for any Python keyword; a file an option names that cannot
        # be opened is the OS's error.
        given = {key: value for key, value in options.items() if value is not None}
        for key in _FILE_OPTIONS:
            path = given.get(key)
            if isinstance(path, (str, os.PathLike)) and (key in ("config", "input", "freqs") or os.fspath(path).endswith(".npy")):
                with open(path, "rb"):
                    pass
        return {key: self.value(key, value) for key, value in given.items()}


# Options the command line reads a file for (some take a comma list instead).
_FILE_OPTIONS = ("config", "input", "freqs", "ids", "positions", "inv_freq")


def _command(subcommand: str, leading: List[str], options: Dict[str, Any]) -> str:
    words = ["poslab", subcommand, *leading, *_poslab.words(subcommand, options)]
    return " ".join(shlex.quote(word) for word in words)


def table(kind: str, **options: Any) -> np.ndarray:
    """The table ``poslab table KIND`` writes, as a NumPy array of its shape and dtype.

    ``kind`` is a kind of ``poslab table`` (``"sinusoidal"``, ``"rope-cos"``, ``"alibi"``, ...);
    the options are its long options with ``_`` for ``-``: ``seq=4096, dim=128,
    base=500000, scaling="llama3", factor=8, original_max_position_embeddings=8192``.
    ``dtype="f64"`` keeps every digit of the f64 engine (the default is float32, as the
    command line's); ``backend="gpu"`` computes on the GPU (falling back to the CPU engine,
    with a warning, where there is none). Lists and arrays go where the command line takes a
    comma list or a ``.npy`` (``positions=``, ``inv_freq=``, ``ids=``); ``config=`` takes a
    ``config.json`` path or a dict.

    Raises ``ValueError`` with the command line's message for a bad kind, option or value.
    """
    with _Files() as files:
        values, notes, _ = _poslab.table(kind, files.options(options))
    for note in notes:
        import warnings

        warnings.warn(note, RuntimeWarning, stacklevel=2)
    return values


class BadCell:
    """One element outside the tolerance: its ``index``, the ``expected`` value (poslab's),
    the value ``got`` (the array's), the ``error`` and, for an array of a float type, the
    error in units in the last place of that type (``ulp``)."""

    __slots__ = ("index", "expected", "got", "error", "ulp")

    def __init__(self, index, expected, got, error, ulp) -> None:
        self.index: Tuple[int, ...] = tuple(index)
        self.expected: float = expected
        self.got: float = got
        self.error: float = error
        self.ulp: Optional[float] = ulp

    def __repr__(self) -> str:
        return f"BadCell(index={self.index}, expected={self.expected!r}, got={self.got!r}, error={self.error:.3e})"


class Verdict:
    """What ``poslab check`` found. ``bool(verdict)`` is ``verdict.matches``.

    - ``matches``: every element within the tolerance (or a documented equivalence).
    - ``equivalent``: a match under an equivalence (a float32 computation of the table, a
      float32-minimum mask for ``-inf``, ...), said in ``notes``.
    - ``rule``: what each element is held to, in words.
    - ``max_abs_error`` and ``max_abs_index``, ``max_rel_error``.
    - ``bad_count`` and ``bad``: the elements outside, and the worst of them (``show=``).
    - ``diagnosis``: the pattern of the elements outside (a layout slip, columns swapped, the
      start, an error growing with position), or ``None``.
    - ``text``: what ``poslab check`` prints; ``command``: that command line.
    """

    def __init__(self, fields: Dict[str, Any], command: str) -> None:
        self.kind: str = fields["kind"]
        self.matches: bool = fields["matches"]
        self.equivalent: bool = fields["equivalent"]
        self.rule: str = fields["rule"]
        self.max_abs_error: float = fields["max_abs_error"]
        index = fields["max_abs_index"]
        self.max_abs_index: Optional[Tuple[int, ...]] = None if index is None else tuple(index)
        self.max_rel_error: float = fields["max_rel_error"]
        self.bad_count: int = fields["bad_count"]
        self.bad: List[BadCell] = [BadCell(**cell) for cell in fields["bad"]]
        self.diagnosis: Optional[str] = fields["diagnosis"]
        self.notes: List[str] = fields["notes"]
        self.text: str = fields["text"]
        self.command: str = command

    def __bool__(self) -> bool:
        return self.matches

    def __repr__(self) -> str:
        said = "MATCH" if self.matches else "MISMATCH"
        return f"<poslab.Verdict {said} {self.kind}: max abs error {self.max_abs_error:.3e}>"

    def __str__(self) -> str:
        return self.text


def check(array: Any, kind: str, **options: Any) -> Verdict:
    """Compares ``array`` with poslab's table of ``kind``: ``poslab check FILE --as KIND``.

    ``array``: anything ``numpy.asarray`` takes, a torch tensor (any device, any float dtype),
    or a path to a ``.npy``, ``.safetensors`` (``tensor=NAME``) or ``.csv`` file. The options
    are the kind's (as ``poslab.table``), and ``atol``, ``rtol`` (without them an array of a
    float type is held to what that type holds: 8 ulp, float64 to 1e-10), ``rows``, ``cols``
    (Python slice text, ``"1:"``), ``show`` (how many bad elements to list, default 10) and
    ``config`` (a ``config.json`` path or dict). Returns a :class:`Verdict`, whether or not it
    matches; see :func:`assert_table` to fail a test.
    """
    name, values, stored = _as_table(array)
    with _Files() as files:
        options = files.options(options)
        fields = _poslab.check(name, values, stored, kind, options)
    shown = name if values is None else "ARRAY.npy"
    return Verdict(fields, _command("check", [shown, "--as", kind], options))


def assert_table(array: Any, kind: str, **options: Any) -> Verdict:
    """:func:`check`, raising ``AssertionError`` (its message the check's report: the largest
    errors, the worst elements and the diagnosis) when ``array`` does not match."""
    verdict = check(array, kind, **options)
    if not verdict.matches:
        raise AssertionError(f"{verdict.text}\n(as: {verdict.command})")
    return verdict


class Identification:
    """Which table an array holds, as ``poslab identify`` says. ``bool(r)`` is ``r.matches``.

    - ``matches``: the closest reading is within the tolerance (``False`` is the command
      line's "no match", with the closest reading in the other fields).
    - ``description``: the reading in words (kind, convention, parameters); ``None`` when no
      kind has a table of the array's shape.
    - ``max_abs_error``: of the closest reading.
    - ``text``: the command line's ``identified:`` (or ``no match``) line; ``notes``: its
      lines before it; ``report``: all it prints.
    - ``kind`` and ``options``: the table as ``poslab.table`` makes it,
      ``poslab.table(r.kind, **r.options)``, confirmed by ``poslab check`` against the array;
      for RoPE's inverse frequencies, angles and cos, sin and cos-sin caches (from position 0
      or a start, at every base and scaling identify reads), sinusoidal tables (any layout,
      order, spacing, start and amplitude), ALiBi's slopes and biases (causal or symmetric,
      a window of the last queries, heads of slope 0, BLOOM's and MPT's per-key forms, CROMA's
      2D biases), 2D sin-cos tables (block order, raster, CLS rows), axial 2D RoPE (timm,
      HunyuanDiT, scaled coordinates too), patch distances, T5's buckets and clipped relative
      offsets, and diffusers' scaled 2D sin-cos grids; RoPE and sinusoidal tables at the
      ``positions`` given, and RoPE over several axes at the ``ids`` or ``grid`` given (which
      ``options`` holds as given). ``None`` where no options make the table (an ALiBi head of
      a slope no head count gives, a table no kind reproduces), and without a match.
    - ``runner_up``: the next reading (an ``Identification``), or ``None``.
    - ``command``: the command line.
    """

    def __init__(
        self,
        matches: bool,
        description: Optional[str],
        max_abs_error: float,
        text: str,
        notes: List[str],
        report: str,
        runner_up: Optional["Identification"],
        command: str,
        kind: Optional[str] = None,
        options: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.matches = matches
        self.description = description
        self.max_abs_error = max_abs_error
        self.text = text
        self.notes = notes
        self.report = report
        self.runner_up = runner_up
        self.command = command
        self.kind = kind
        self.options = options

    def __bool__(self) -> bool:
        return self.matches

    def __repr__(self) -> str:
        return f"<poslab.Identification {self.text}>"

    def __str__(self) -> str:
        return self.report


def identify(array: Any, **options: Any) -> Identification:
    """Says which table ``array`` holds: ``poslab identify FILE``.

    ``array`` as for :func:`check`. Options: ``positions`` (one position per row, a list or
    array), ``position_scale``, ``ids`` (a ``[seq, axes]`` array of each token's positions),
    ``grid`` (``"T,H,W"``), ``atol``, ``rtol``, ``rows``, ``cols``, ``tensor``.
    """
    name, values, stored = _as_table(array)
    given = dict(options)
    with _Files() as files:
        options = files.options(options)
        fields = _poslab.identify(name, values, stored, options)
    table_options = fields["options"]
    if table_options is not None:
        # The positions the call gave come back as given (not as the temporary file).
        for key in ("positions", "position_scale", "ids", "grid"):
            if key in table_options and key in given:
                table_options[key] = given[key]
    shown = name if values is None else "ARRAY.npy"
    command = _command("identify", [shown], options)
    runner_up = None
    if fields["runner_up"] is not None:
        description, matches, error = fields["runner_up"]
        runner_up = Identification(
            matches, description, error, f"runner-up: {description}", [], "", None, command
        )
    return Identification(
        fields["matches"],
        fields["description"],
        fields["max_abs_error"],
        fields["line"],
        fields["notes"],
        fields["text"],
        runner_up,
        command,
        fields["kind"],
        table_options,
    )


class RopeReport:
    """What :func:`assert_rope` found.

    - ``passes``: every output within what a correct implementation in the dtype gets.
    - ``max_abs_error``; ``rule``: what each output is held to, in words.
    - ``worst``: where the outputs first differ (the lowest position with an element outside
      the rule, and its worst element), or the element of the largest error when it passes: a
      dict of ``position``, ``head``, ``dim``, ``pair`` (in the expected pairing; ``None``
      past the rotary dims), ``expected`` and ``got``.
    - ``applied``: the rotation read from the outputs: ``layout`` (``"half"``,
      ``"interleaved"``, or ``None`` when the outputs are not a rotation of pairs), ``gain``
      (output pair norm over input pair norm) beside ``expected_gain`` (the attention
      factor), ``changed_dims``, and ``angles`` (the angles read as a cos cache and
      identified: base, scaling, ...).
    - ``causes``: each cause named, one sentence each with the option or config field to look
      at (empty when it passes).
    - ``seconds`` in the whole check and ``seconds_in_function`` in the user's function.
    - ``text``: all of it, as the ``AssertionError`` says it.
    """

    def __init__(self, fields: Dict[str, Any], seconds: float, in_function: float) -> None:
        self.passes: bool = fields["passes"]
        self.max_abs_error: float = fields["max_abs_error"]
        self.rule: str = fields["rule"]
        self.worst: Optional[Dict[str, Any]] = fields["worst"]
        self.applied: Dict[str, Any] = fields["applied"]
        self.causes: List[str] = fields["causes"]
        self.text: str = fields["text"]
        self.seconds = seconds
        self.seconds_in_function = in_function

    def __bool__(self) -> bool:
        return self.passes

    def __repr__(self) -> str:
        said = "MATCH" if self.passes else "MISMATCH"
        return f"<poslab.RopeReport {said}: max abs error {self.max_abs_error:.3e}>"

    def __str__(self) -> str:
        return self.text


def _bfloat16_values(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), held as float32."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


_DTYPES = ("float32", "bfloat16", "float16", "float64")


def assert_rope(
    fn: Any,
    *,
    config: Any = None,
    positions: Any = None,
    heads: int = 2,
    dtype: str = "float32",
    framework: str = "numpy",
    device: str = "cpu",
    seed: int = 0,
    atol: Optional[float] = None,
    **options: Any,
) -> RopeReport:
    """Checks a RoPE rotation function at long positions, and names what is wrong with it.

    ``fn(x, position_ids)`` is the user's rotation: ``x`` of shape ``[1, heads, seq, dim]``
    (Hugging Face's ``[batch, heads, seq, head_dim]``), ``position_ids`` of shape ``[1, seq]``
    (int64), both NumPy arrays, or torch tensors on ``device`` with ``framework="torch"``. It
    returns the rotated ``x``, the same shape. Adapt a library's call in a lambda, e.g.
    Hugging Face's: ``lambda x, p: apply_rotary_pos_emb(x, x, *rope(x, p))[0]``.

    The expected rotation is the RoPE that ``config`` (a ``config.json`` path, a dict, or a
    transformers config) or the options describe: ``dim`` (the head width), ``base``,
    ``layout`` (``"half"``: rotate_half, as Hugging Face's models; ``"interleaved"``, the
    command line's default; a config decides it from the model type), ``rotary_dim`` or
    ``partial_rotary_factor``, ``scaling`` and its parameters (``factor``,
    ``original_max_position_embeddings``, ...), exactly as ``poslab table rope-apply`` takes
    them. ``positions`` default to 0..63 and both sides of 256, 512, ..., 131072, of 100000 and
    of every context the scaling names, since short prompts hide most bugs. ``x`` is random
    (``seed``) and exactly representable in ``dtype``.

    It passes when every output is within what a correct implementation computing in
    ``dtype`` gets (``poslab check``'s rule for that dtype: for float32, 8 ulp or, for
    PyTorch's float32 computation of the angle, within 2 ulp of that computation; for
    bfloat16 and float16, 8 ulp of that type), or within ``atol`` when given. Then it
    returns a :class:`RopeReport`. Otherwise it raises ``AssertionError`` saying where the
    outputs first differ (position, head, dim, expected, got), the largest error, the rotation
    the outputs show (pairing, gain) and each cause it can name: the other layout, the base
    fallen back to 10000, the scaling dropped or another factor, the attention factor dropped
    or squared, the whole head rotated under partial rotary, position ids off by one, positions
    cast to float16 or bfloat16, or not a rotation of pairs at all.
    """
    if dtype not in _DTYPES:
        raise ValueError(f"dtype={dtype!r} is not allowed: use one of {', '.join(_DTYPES)}")
    if framework not in ("numpy", "torch"):
        raise ValueError(f"framework={framework!r} is not allowed: use 'numpy' or 'torch'")
    if not isinstance(heads, int) or isinstance(heads, bool) or not 1 <= heads <= 4096:
        raise ValueError(f"heads={heads!r} is not allowed: use a whole number from 1 to 4096")
    started = time.perf_counter()
    with _Files() as files:
        if config is not None:
            options = dict(options, config=config)
        opts = files.options(options)
        dim = opts.pop("dim", None)
        dim, default_positions = _poslab.rotation_setup(dim, opts)
        at = np.asarray(default_positions if positions is None else positions)
        if at.ndim != 1 or at.size == 0 or at.dtype.kind not in "iu":
            raise ValueError("positions= takes a non-empty list of whole numbers, one per row")
        at = at.astype(np.int64)
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((1, heads, at.size, dim)).astype(np.float32)
        if dtype == "bfloat16":
            x = _bfloat16_values(x)
        elif dtype == "float16":
            x = x.astype(np.float16)
        elif dtype == "float64":
            x = x.astype(np.float64)
        exact_x = x.astype(np.float64)
        if framework == "torch":
            import torch

            given = torch.from_numpy(x.astype(np.float32) if dtype == "bfloat16" else x)
            given = given.to(device=device, dtype=getattr(torch, dtype))
            ids = torch.from_numpy(at[None, :]).to(device)
        else:
            given, ids = x, at[None, :]
        before = time.perf_counter()
        out = fn(given, ids)
        in_function = time.perf_counter() - before
        if _is_torch(out):
            import torch

            out = out.detach().cpu()
            # NumPy has no bfloat16: narrow floats widen exactly to float32 first.
            out = (out if out.dtype == torch.float64 else out.float()).numpy()
        out = np.asarray(out)
        if out.shape != x.shape:
            raise ValueError(
                f"the function returned shape {list(out.shape)} for x of shape {list(x.shape)}: it must return the rotated x"
            )
        fields = _poslab.rotation(
            exact_x[0], np.asarray(out, dtype=np.float64)[0], at.tolist(), dtype, atol, opts
        )
    report = RopeReport(fields, time.perf_counter() - started, in_function)
    if not report.passes:
        raise AssertionError(report.text)
    return report


class PermutationReport:
    """What :func:`assert_permutation` found.

    - ``passes``: every score of every query head kept, at every position pair tried.
    - ``wrong_heads``: the query heads whose scores changed.
    - ``largest_change``: the largest change of a score ``q·k``, as a part of ``|q| |k|``.
    - ``positions``: the position pairs ``(m, n)`` of query and key tried, up to past 100,000.
    - ``causes``: each cause the rows show, one sentence each (empty when it passes).
    - ``text``: all of it, as the ``AssertionError`` says it.
    """

    def __init__(self, fields: Dict[str, Any]) -> None:
        self.passes: bool = fields["passes"]
        self.wrong_heads: List[int] = fields["wrong_heads"]
        self.largest_change: float = fields["largest_change"]
        self.positions: List[Tuple[int, int]] = [tuple(p) for p in fields["positions"]]
        self.causes: List[str] = fields["causes"]
        self.text: str = fields["text"]

    def __bool__(self) -> bool:
        return self.passes

    def __repr__(self) -> str:
        said = "MATCH" if self.passes else "MISMATCH"
        return f"<poslab.PermutationReport {said}: largest change {self.largest_change:.1e}>"

    def __str__(self) -> str:
        return self.text


def assert_permutation(
    permute: Any,
    *,
    heads: int,
    kv_heads: Optional[int] = None,
    head_dim: int,
    hidden: Optional[int] = None,
    direction: str = "interleaved-to-half",
    seed: int = 0,
    framework: str = "numpy",
) -> PermutationReport:
    """Checks a function that reorders a projection's rows from one RoPE pair layout to the
    other, as conversion scripts do for ``q_proj`` and ``k_proj``.

    ``permute(w, n_heads)`` is the user's function: ``w`` a ``[n_heads * head_dim, hidden]``
    weight (a NumPy array, or a torch tensor with ``framework="torch"``), ``n_heads`` its
    heads; it returns the weight with its rows reordered. It is called on a random ``W_q`` of
    ``heads`` heads and a random ``W_k`` of ``kv_heads`` heads (grouped-query attention;
    default ``heads``). ``hidden`` is the model width (default ``heads * head_dim``).
    ``direction``: ``"interleaved-to-half"`` (Meta's or a GGUF's weights to Hugging Face's
    rotate_half; the default) or ``"half-to-interleaved"`` (Hugging Face's to llama.cpp's).

    It passes when, for every query head and its kv head, the score ``RoPE(q, m) · RoPE(k,
    n)`` with the original weights in the source layout equals the score with the permuted
    weights in the target layout, at position pairs up to past 100,000 (to 1e-9 of
    ``|q| |k|``; an exact permutation changes only the order of a sum). Then it returns a
    :class:`PermutationReport`. Otherwise it raises ``AssertionError`` naming the query heads
    whose scores differ and, from the rows each projection holds, the heads that are wrong and
    the known cause: not permuted, the other direction, permuted twice, ``k`` permuted with the
    query head count (the grouped-query bug), or heads of another size (a head dim split
    across heads). Bad arguments raise ``ValueError``.
    """
    if framework not in ("numpy", "torch"):
        raise ValueError(f"framework={framework!r} is not allowed: use 'numpy' or 'torch'")
    for name, value in [("heads", heads), ("kv_heads", kv_heads), ("head_dim", head_dim), ("hidden", hidden), ("seed", seed)]:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"{name}={value!r} is not allowed: use a whole number")
    _poslab.permutation_setup(heads, kv_heads, head_dim, direction)
    kv = heads if kv_heads is None else kv_heads
    width = heads * head_dim if hidden is None else hidden
    if not 1 <= width <= 1 << 16:
        raise ValueError(f"hidden={width} is not allowed: use 1 to 65536")
    if not 1 <= heads * head_dim <= 1 << 20 or not 1 <= kv * head_dim <= 1 << 20:
        raise ValueError(
            f"heads={heads}, kv_heads={kv}, head_dim={head_dim} give more than 1048576 rows (or none): use a smaller model"
        )
    if seed < 0:
        raise ValueError(f"seed={seed} is not allowed: use 0 or more")
    rng = np.random.default_rng(seed)
    wq = rng.standard_normal((heads * head_dim, width)).astype(np.float32)
    wk = rng.standard_normal((kv * head_dim, width)).astype(np.float32)

    def call(w: np.ndarray, n: int) -> np.ndarray:
        given: Any = w.copy()
        if framework == "torch":
            import torch

            given = torch.from_numpy(given)
        out = permute(given, n)
        if _is_torch(out):
            out = out.detach().cpu()
            out = (out if str(out.dtype) == "torch.float64" else out.float()).numpy()
        return np.asarray(out, dtype=np.float64)

    fields = _poslab.permutation(
        wq.astype(np.float64),
        wk.astype(np.float64),
        call(wq, heads),
        call(wk, kv),
        heads,
        kv_heads,
        head_dim,
        direction,
        seed,
    )
    report = PermutationReport(fields)
    if not report.passes:
        raise AssertionError(report.text)
    return report


class RopeConfig:
    """A RoPE model's settings (one layer type's, where it has several), as ``poslab config``
    reads its ``config.json``.

    - ``options``: the options of the RoPE kinds (``dim``, ``base``, ``rotary_dim``,
      ``layout``, ``scaling`` and its parameters) such that ``poslab.table("rope-cos", seq=N,
      **config.options)`` gives the model's cos cache, and ``assert_rope(fn,
      **config.options)`` checks its rotation.
    - ``attention_factor``: what its scaling multiplies cos and sin by (1 without one).
    - ``sources``: each setting (``dim``, ``rotary_dim``, ``base``, ``layout``, ``scaling``
      and its parameters, ``attention_factor``, ``context``) to the config field it was read
      from (``"rope_parameters.full_attention.rope_theta"``), or ``"default: ..."``.
    - ``warnings``: the config's fields that are ignored, conflicting or missing, in words
      (``"rope_scaling.mscale: is ignored: attention_factor beside it ..."``).
    - ``layer_type``: the layer type this RoPE is (``None`` for a model with one RoPE);
      ``layer_types``: the layer types it covers.
    - ``model``: its name; ``text``: what ``poslab config`` prints.
    """

    def __init__(self, fields: Dict[str, Any]) -> None:
        self.options: Dict[str, Any] = fields["options"]
        self.attention_factor: float = fields["attention_factor"]
        self.sources: Dict[str, str] = fields["sources"]
        self.warnings: List[str] = fields["warnings"]
        self.layer_type: Optional[str] = fields["layer_type"]
        self.layer_types: List[str] = fields["layer_types"]
        self.model: str = fields["model"]
        self.text: str = fields["text"]

    def __repr__(self) -> str:
        layer = f" [{self.layer_type}]" if self.layer_type else ""
        return f"<poslab.RopeConfig {self.model}{layer}: {self.options}>"

    def __str__(self) -> str:
        return self.text


def rope_config(config: Any, layer_type: Optional[str] = None) -> RopeConfig:
    """A RoPE model's settings from its ``config.json`` or ``.gguf`` file: ``config`` is a
    path, a dict, or any object with ``to_dict()`` (a transformers ``PretrainedConfig``). A
    ``.gguf`` gives the RoPE llama.cpp runs (its metadata and RoPE tensors; the pair layout
    from llama.cpp's table of architectures). Both of transformers' dialects are read (``rope_scaling`` with a top-level ``rope_theta``, and
    ``rope_parameters``, flat or one per layer type). A model with a different RoPE per layer
    type (Gemma 3, ModernBERT) needs ``layer_type=`` (``"full_attention"``,
    ``"sliding_attention"``): without it, ``ValueError`` names them. A config without RoPE, or
    one no table can be made from (a factor below 1), raises ``ValueError`` in the command
    line's words; a file that cannot be read raises ``OSError``.
    """
    with _Files() as files:
        path = files.options({"config": config})["config"]
        fields = _poslab.rope_config(path, layer_type)
    return RopeConfig(fields)


def rope_configs(config: Any) -> Dict[Optional[str], RopeConfig]:
    """Every RoPE of a model's ``config.json``, by layer type: ``{"full_attention": ...,
    "sliding_attention": ...}`` for a model with one per layer type, ``{None: ...}`` for a
    model with one RoPE. ``config`` as for :func:`rope_config`.
    """
    with _Files() as files:
        path = files.options({"config": config})["config"]
        every = _poslab.rope_configs(path)
    return {fields["layer_type"]: RopeConfig(fields) for fields in every}
