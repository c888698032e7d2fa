"""MPS012: host sites of kind "subiter_tensor" recorded by the host reader."""


def check(ix, rule):
    for site in ix.sites("subiter_tensor"):
        yield rule.finding(site.span, kernel=site.function, detail=site.detail)
