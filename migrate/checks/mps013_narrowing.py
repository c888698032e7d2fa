"""MPS013: host sites of kind "narrow_numel" recorded by the host reader."""


def check(ix, rule):
    for site in ix.sites("narrow_numel"):
        yield rule.finding(site.span, kernel=site.function, detail=site.detail)
