"""Time the full lint of a real tree against torchgen's parse of the same yaml, in one run.

    python bench/bench_lint.py [ROOT]     (default: the PyTorch 2.6.0 tree from ../shared/corpus)

Prints best-of-N wall times and the ratio lint / torchgen (target: <= 0.3).
"""
from __future__ import annotations

import sys
from pathlib import Path

from common import best, pytorch_tree

def main() -> None:
    root = pytorch_tree(sys.argv[1] if len(sys.argv) > 1 else None)
    if (root / "torchgen" / "gen.py").is_file():
        sys.path.insert(0, str(root))  # the tree's own torchgen parses its own yaml
    import torchgen.gen as tg

    print(f"torchgen from {Path(tg.__file__).parent}")

    from migrate.cache import disable_cache
    from migrate.lint import lint_tree
    from migrate.tree import YAML_REL, load_tree

    yaml_path = root / YAML_REL
    tags_path = yaml_path.with_name("tags.yaml")

    def torchgen_parse():
        tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
        tg._GLOBAL_PARSE_TAGS_YAML_CACHE.clear()
        tg.parse_native_yaml(str(yaml_path), str(tags_path))

    def lint_cold():
        with disable_cache():
            lint_tree(load_tree(root))

    def lint_warm():
        lint_tree(load_tree(root))

    import gc

    gc.disable()  # as the CLI does
    lint_warm()  # fill the parse cache
    t_tg = best(torchgen_parse, 3)
    t_cold = best(lint_cold, 3)
    t_warm = best(lint_warm, 5)
    n = len(load_tree(root).hosts)
    print(f"tree: {root} ({n} host files)")
    print(f"torchgen parse_native_yaml      {t_tg * 1000:8.1f} ms")
    print(f"mps-migrate lint, no cache      {t_cold * 1000:8.1f} ms   ratio {t_cold / t_tg:.2f}")
    print(f"mps-migrate lint, warm cache    {t_warm * 1000:8.1f} ms   ratio {t_warm / t_tg:.2f}")


if __name__ == "__main__":
    main()
