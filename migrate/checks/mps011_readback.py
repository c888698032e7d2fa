"""MPS011: host sites of kind "readback" recorded by the host reader."""


def check(ix, rule):
    for site in ix.sites("readback"):
        yield rule.finding(site.span, kernel=site.function, detail=site.detail)
