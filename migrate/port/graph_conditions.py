"""The host conditions around graph-building code, decided while it is translated: a graph tensor set or not,
a bool the caller's arguments decide, two dtypes compared; and the dtype branches (``[t dataType] ==
MPSDataTypeInt64``, a flag bit, ``isIntegralType`` on the output), which become ``dtype_if`` nodes.

``Conditions`` is the part of ``Translator`` (migrate/port/translate.py) that reads them: it uses the
translator's ``eval``, ``run``, ``blocked``, its rule table ``t``, ``inputs``, ``outputs``, ``known``, ``facts``
and ``possible``."""

from __future__ import annotations

from migrate.conventions.specialise import truth
from migrate.port.dag import Node
from migrate.port.graph_values import OUTPUT_WORDS, VOID, DtypeRef, DtypeTest, Unset, dtype_sets
from migrate.source import objc as o


class Conditions:
    def decide(self, e, env: dict) -> bool | None:
        """A host condition the graph code's own values decide: a graph tensor (set) or nil (an unset
        member), a bool the host code derives from an optional the caller passes or leaves empty, two
        dtypes that are the same variable, an input's dtype against the output's (the kernel computes
        in the iterator's common dtype, so the cast that branch makes is the iterator's own), or a dtype
        test of a tensor whose dtypes are known here (a cast's, or an input's inside a dtype branch).
        What none of these decides, the caller's literals may (``rounding_mode.has_value()``)."""
        r = self._decide(e, env)
        if r is None and self.known and not (isinstance(e, o.Name) and e.id in env):
            r = truth(e, self.known)
        return r

    def _decide(self, e, env: dict) -> bool | None:
        test = self._test_of(e, env)
        if test is not None:
            have = self._dtypes_of(test[0])
            if have and have <= test[1]:
                return test[2]
            if have and not have & test[1]:
                return not test[2]
        if isinstance(e, o.Name):
            if e.id in env:
                v = env[e.id]
                return True if isinstance(v, Node) else False if v is None or isinstance(v, Unset) else None
            k = self.facts.known.get(e.id)
            return None if k is None else bool(k.value)
        if isinstance(e, o.Unary) and e.op == "!":
            d = self.decide(e.expr, env)
            return None if d is None else not d
        if isinstance(e, o.Binary) and e.op in ("&&", "||"):
            left, right = self.decide(e.left, env), self.decide(e.right, env)
            if e.op == "&&":
                return False if False in (left, right) else True if left is right is True else None
            return True if True in (left, right) else False if left is right is False else None
        if isinstance(e, o.Binary) and e.op in ("==", "!="):
            left, right = self.eval(e.left, env), self.eval(e.right, env)
            known = [self._fixed_dtype(x) for x in (left, right)]
            if None not in known:  # `if (t.dataType != MPSDataTypeBool)` on a comparison's result
                return (known[0] == known[1]) == (e.op == "==")
            if isinstance(left, DtypeRef) and isinstance(right, DtypeRef) and left.host and right.host:
                if left.host == right.host:
                    return e.op == "=="
                if self._is_output(left.host) or self._is_output(right.host):
                    return e.op == "!="
        return None

    def _fixed_dtype(self, d) -> str | None:
        """The Metal dtype ``d`` names whatever the operands: a dtype word, a cast's target, or the result of
        a comparison or logical op (bool); None when it follows the input."""
        if not isinstance(d, DtypeRef):
            return None
        if d.dtype is not None:
            return d.dtype
        n = d.like
        if n is None:
            return None
        if n.op == "cast":
            return n.dtype
        rule = self.t.ops.get(n.op)
        return "bool" if rule is not None and rule.returns_bool else None

    def _is_output(self, host: str) -> bool:
        return any(w in host.lower() for w in OUTPUT_WORDS)

    # ------------------------------------------------------- dtype branches
    def dtype_test(self, cond, env) -> tuple[Node, frozenset[str], bool] | None:
        """``[t dataType] == MPSDataTypeInt64`` (or ``!=``, ``t.dataType``), ``([t dataType] &
        MPSDataTypeFloatBit) != 0``, a bool holding such a test, ``isIntegralType(result_type, includeBool)``
        on the output's dtype: decided by the dtype at dispatch time, not by the data: (input, dtypes,
        equal), the input the tested tensor takes its dtype from."""
        test = self._test_of(cond, env)
        if test is None:
            return None
        node = self._follows(test[0])
        return None if node is None else (node, test[1], test[2])

    def _test_of(self, cond, env) -> tuple[Node, frozenset[str], bool] | None:
        """(graph tensor, dtypes, equal) when ``cond`` tests the tensor's dtype: true when it is (``equal``)
        or is not one of ``dtypes``."""
        if isinstance(cond, o.Unary) and cond.op == "!":
            test = self._test_of(cond.expr, env)
            return None if test is None else (test[0], test[1], not test[2])
        if isinstance(cond, o.Name):
            v = env.get(cond.id)
            return (v.node, v.dtypes, v.equal) if isinstance(v, DtypeTest) else None
        bits = self._bits_test(cond, env)
        if bits is not None:
            return bits
        family = self._dtype_family(cond, env)
        if family is not None:
            return family
        if not (isinstance(cond, o.Binary) and cond.op in ("==", "!=")):
            return None
        left, right = self.eval(cond.left, env), self.eval(cond.right, env)
        if isinstance(right, DtypeRef) and right.like is not None:
            left, right = right, left
        if not (
            isinstance(left, DtypeRef)
            and left.like is not None
            and isinstance(right, DtypeRef)
            and right.dtype is not None
        ):
            return None
        return left.like, frozenset({right.dtype}), cond.op == "=="

    def _bits_test(self, cond, env) -> tuple[Node, frozenset[str], bool] | None:
        """``([t dataType] & MPSDataTypeFloatBit) != 0`` (``== 0``, or the bare mask): the dtypes carrying
        the flag bit (rules/dtypes.yaml ``mps_type_bits``)."""
        equal = True
        if isinstance(cond, o.Binary) and cond.op in ("==", "!="):
            masked, zero = (cond.right, cond.left) if isinstance(cond.left, o.Num) else (cond.left, cond.right)
            if not (isinstance(zero, o.Num) and zero.value == 0):
                return None
            cond, equal = masked, cond.op == "!="
        if not (isinstance(cond, o.Binary) and cond.op == "&"):
            return None
        bits = dtype_sets()[1]
        for tensor, bit in ((cond.left, cond.right), (cond.right, cond.left)):
            name = bit.id.rsplit("::", 1)[-1] if isinstance(bit, o.Name) else None
            if name in bits:
                dtype = self.eval(tensor, env)
                if isinstance(dtype, DtypeRef) and dtype.like is not None:
                    return dtype.like, bits[name], equal
        return None

    def _dtypes_of(self, n: Node) -> frozenset[str] | None:
        """The dtypes graph tensor ``n`` can have here: an input's, as the dtype branches around narrow it; a
        cast's target; bool for a comparison; else its operands' (MPSGraph's elementwise ops take operands of
        one dtype and keep it). None: not known."""
        if n.op == "input":
            return self.possible.get(id(n), dtype_sets()[0])
        if n.op == "cast":
            return frozenset({n.dtype})
        if n.op in ("const", "alpha"):
            if n.dtype is not None:
                return frozenset({n.dtype})
            return self._dtypes_of(n.like) if n.like is not None else None
        rule = self.t.ops.get(n.op)
        if rule is not None and rule.returns_bool:
            return frozenset({"bool"})
        sets = [d for d in map(self._dtypes_of, n.args[1:] if n.op in ("dtype_if", "select") else n.args) if d]
        if not sets:
            return None
        return (frozenset().union(*sets) if n.op == "dtype_if" else frozenset.intersection(*sets)) or None

    def _follows(self, n: Node) -> Node | None:
        """The input whose dtype graph tensor ``n`` has (computed from it by ops that keep the dtype), or None."""
        if n.op == "input":
            return n
        rule = self.t.ops.get(n.op)
        if rule is None or rule.returns_bool:  # a cast, a constant, a comparison
            return None
        return next((f for f in map(self._follows, n.args) if f is not None), None)

    def _dtype_family(self, cond, env) -> tuple[Node, frozenset[str], bool] | None:
        negated = isinstance(cond, o.Unary) and cond.op == "!"
        call = cond.expr if negated else cond
        if not (isinstance(call, o.Call) and isinstance(call.func, o.Name) and call.args and self.inputs):
            return None
        test = call.func.id.rsplit("::", 1)[-1]
        if test not in ("isIntegralType", "isFloatingType"):
            return None
        dtype = self.eval(call.args[0], env)
        if not (isinstance(dtype, DtypeRef) and dtype.host and self._is_output(dtype.host)):
            return None
        from migrate.tables import load_table

        families = load_table("dtypes.yaml")
        if test == "isFloatingType":
            names = set(families["float"])
        else:
            bools = len(call.args) > 1 and isinstance(call.args[1], o.Name) and call.args[1].id == "true"
            names = {d for d in families["integral"] if bools or d != "bool"}
        return self.inputs[0], frozenset(names), not negated

    def dtype_branch(self, test, s: o.If, rest: tuple, env: dict):
        """Both arms run symbolically; values that differ become ``dtype_if`` nodes (per-dtype
        specialisation in the functor).  The arm without a return falls through to ``rest``."""
        node, dtypes, equal = test
        universe, _, integral = dtype_sets()
        if not dtypes <= integral and universe - dtypes <= integral:  # `if (!isFloatInput)`: the integer arm
            dtypes, equal = universe - dtypes, not equal
        had = self.possible.get(id(node), universe)  # each arm knows which dtypes the input has there
        inside, outside = (had & dtypes, had - dtypes) if equal else (had - dtypes, had & dtypes)
        env_then, env_else = dict(env), dict(env)
        before = dict(self.outputs)
        try:
            self.possible[id(node)] = inside
            then = self.run(s.then, env_then)
            if then is None:
                then = self.run(rest, env_then)
            stored_then, self.outputs = self.outputs, dict(before)
            self.possible[id(node)] = outside
            other = self.run(s.other, env_else)
            if other is None:
                other = self.run(rest, env_else)
        finally:
            self.possible[id(node)] = had
        stored_else = self.outputs
        if not equal:
            then, other = other, then
            stored_then, stored_else = stored_else, stored_then
        self.outputs = self._merge_stores(node, dtypes, stored_then, stored_else, s.line)
        if then in (None, VOID) and other in (None, VOID):
            return VOID if VOID in (then, other) else None
        if not (isinstance(then, Node) and isinstance(other, Node)):
            raise self.blocked(
                f"dtype branch on {node.name} where only one arm returns a graph tensor",
                "control flow (dtype branch)",
                s.line,
            )
        return Node("dtype_if", (node, then, other), dtype=",".join(sorted(dtypes)))

    def _merge_stores(self, node, dtypes, then: dict, other: dict, line: int) -> dict:
        """Cached-graph members after a dtype branch: one value, or a ``dtype_if`` of the two arms'."""
        merged = {}
        for key in dict.fromkeys([*then, *other]):
            a, b = then.get(key), other.get(key)
            if a is b:
                merged[key] = a
            elif isinstance(a, Node) and isinstance(b, Node):
                merged[key] = Node("dtype_if", (node, a, b), dtype=",".join(sorted(dtypes)))
            else:
                raise self.blocked(
                    f"dtype branch on {node.name} where only one arm sets {key}", "control flow (dtype branch)", line
                )
        return merged
