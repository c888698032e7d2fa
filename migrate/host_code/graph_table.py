"""The MPSGraph emulation's view of rules/mpsgraph.yaml (no torch here): which selectors it answers, the argument
kinds the shim reads for each, and the lines the shim is given (``shim_table``)."""

from __future__ import annotations

from functools import lru_cache

from migrate.tables import load_table


@lru_cache(maxsize=1)
def raw() -> dict:
    return load_table("mpsgraph.yaml")


@lru_cache(maxsize=1)
def graph_selectors() -> dict[str, dict]:
    """selector -> {"eval": name, "returns": "t" | "ts"} for the non-elementwise selectors."""
    out = {}
    for sel, spec in raw()["emulation"]["graph"].items():
        spec = {"eval": spec} if isinstance(spec, str) else dict(spec)
        spec.setdefault("returns", "t")
        out[sel] = spec
    return out


def elementwise_selectors() -> dict[str, str]:
    """selector -> its op name in ``ops`` (evaluated by the op's torch function)."""
    return {d["selector"]: name for name, d in raw()["ops"].items()}


def arg_kinds(selector: str) -> list[str]:
    labels = raw()["emulation"]["labels"]
    out = []
    for label in selector.rstrip(":").split(":"):
        if label.endswith("Tensors"):
            out.append("ts")
        elif label.endswith("Tensor"):
            out.append("t")
        elif label in labels:
            out.append(labels[label])
        else:
            raise ValueError(f"rules/mpsgraph.yaml emulation.labels: no kind for label {label!r} of {selector}")
    return out


def emulated() -> dict[str, str]:
    """selector -> how the emulation answers it (``ops.NAME`` or ``emulation.graph: EVALUATOR``)."""
    out = {sel: f"ops.{name}" for sel, name in elementwise_selectors().items()}
    out |= {sel: f"graph: {spec['eval']}" for sel, spec in graph_selectors().items()}
    return out


def shim_table() -> str:
    """The lines the shim reads: ``selector kind,kind,...,->returns`` for each selector its generic method
    answers (the constants and placeholders are methods of their own)."""
    lines = []
    for sel in sorted(set(elementwise_selectors()) | set(graph_selectors())):
        returns = graph_selectors().get(sel, {}).get("returns", "t")
        lines.append(f"{sel} {','.join(arg_kinds(sel))},->{returns}")
    return "\n".join(lines) + "\n"
