"""MPS007: exec_*_kernel(iter, "name") without a registered Metal functor."""


def check(ix, rule):
    for hf in ix.tree.hosts.values():
        for call in hf.kernel_calls:
            if not call.shared_library or not call.name or ix.metal_kernel_exists(call.name):
                continue
            if ix.hidden_in("metal", call.name) or ix.hidden_in("host", call.name):
                continue  # may be registered in a file that could not be read
            yield rule.finding(call.span, kernel=call.name, helper=call.helper)
