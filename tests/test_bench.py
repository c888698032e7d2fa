"""mps-migrate bench: the generated Mac script compiles, names the family's OpInfo entries,
its pure parts compute what they say, and its whole logic runs here with --device cpu."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys

from migrate import mac_bench_template as t
from tests.helpers import FIXTURES, MINI, run_cli


def _script(tmp_path, family="atan2", root=MINI):
    out = tmp_path / f"bench_{family}.py"
    p = run_cli("bench", family, "--root", str(root), "-o", str(out))
    assert p.returncode == 0, p.stderr
    return out


def test_script_compiles_with_the_family_targets(tmp_path):
    p = run_cli("bench", "atan2", "--root", str(MINI))
    assert p.returncode == 0, p.stderr
    compile(p.stdout, "bench_atan2.py", "exec")
    values = {
        n.targets[0].id: ast.literal_eval(n.value)
        for n in ast.parse(p.stdout).body
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id in ("FAMILY", "TARGETS")
    }
    assert values == {"FAMILY": "atan2", "TARGETS": [("atan2", "")]}


def test_pure_parts():
    class Shaped:
        def __init__(self, *shape):
            self.shape = shape

    assert (
        t.sample_key("atan2", "", "float16", (Shaped(5, 10), Shaped()), {"out": None})
        == "atan2 float16 (5x10, scalar; out=None)"
    )
    assert (
        t.sample_key("nn.functional.gelu", "tanh", "float32", ([Shaped(2), 3],), {})
        == "nn.functional.gelu.tanh float32 ([2,3])"
    )
    store = t.merge({}, "before", "mps", {"a": 2.0, "b": 1.0, "c": 4.0})
    store = t.merge(store, "after", "mps", {"a": 1.0, "b": 3.0})
    assert t.compare(store) == [("a", 2.0, 1.0, 0.5), ("b", 1.0, 3.0, 3.0)]
    text = t.render(t.compare(store))
    assert f"geometric mean after/before: {math.sqrt(1.5):.2f} over 2 samples; 1 more than 5% slower" in text
    assert t.render([]) == "no sample was timed in both runs\n"


def test_runs_on_cpu_before_and_after(tmp_path):
    script = _script(tmp_path)
    data = tmp_path / "t.json"
    run = [
        sys.executable,
        str(script),
        "--device",
        "cpu",
        "--dtypes",
        "float32",
        "--iters",
        "2",
        "--warmup",
        "1",
        "--out",
        str(data),
    ]
    first = subprocess.run(run + ["--label", "before"], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "geometric mean" not in first.stdout
    second = subprocess.run(run + ["--label", "after"], capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    store = json.loads(data.read_text())
    assert set(store) == {"before", "after"} and store["after"]["device"] == "cpu"
    keys = set(store["before"]["ms"])
    assert keys == set(store["after"]["ms"]) and "atan2 float32 (5x10x5, 5x10x5)" in keys
    assert all(k.startswith("atan2 float32 (") for k in keys)
    assert f"over {len(keys)} samples" in second.stdout


def test_refuses_without_mps(tmp_path):
    script = _script(tmp_path)
    p = subprocess.run([sys.executable, str(script), "--label", "before"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    assert p.stderr.strip() == "this script times the Apple GPU: torch.backends.mps.is_available() is False"


def test_family_without_opinfo_is_a_usage_error():
    p = run_cli("bench", "review_max", "--root", str(FIXTURES / "review"))
    assert p.returncode == 2
    assert p.stderr.strip().endswith("no OpInfo entry tests review_max: nothing to time")
    assert len(p.stderr.strip().splitlines()) == 1
