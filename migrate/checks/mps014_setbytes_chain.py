"""MPS014: host sites of kind "setbytes_chain" recorded by the host reader."""


def check(ix, rule):
    for site in ix.sites("setbytes_chain"):
        yield rule.finding(site.span, kernel=site.function, detail=site.detail)
