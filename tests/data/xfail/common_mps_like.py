# Hand-written fixture in the shape of torch/testing/_internal/common_mps.py.
# Non-ASCII on purpose: “smart quotes” shift byte offsets away from characters.
import torch

MODULE_XFAILLIST = {"zeta": None}

if torch.backends.mps.is_available():

    def ops_modifier(ops):
        SUPPORTED_COMPLEX_OPS = {
            "abs",
            "add",  # trailing comment
            "nn.functional." "pad",
        }

        # Ops that are “not implemented”
        UNIMPLEMENTED_XFAILLIST: dict[str, list | None] = {
            "atan2": None,
            "copysign": [torch.float16, torch.bfloat16],
            "nn.functional.gelu": [
                torch.int8,
                torch.uint8,
            ],
            f"dyn_{1}": None,
            **{"hidden": None},
        }
        UNIMPLEMENTED_XFAILLIST.update({"logaddexp": None})
        UNIMPLEMENTED_XFAILLIST.update(MODULE_XFAILLIST)

        EMPTY_OPS_SKIPLIST = ["empty", 'new_empty']

        def nested():
            XFAILLIST_GRAD = ("pow",)
            return XFAILLIST_GRAD

        NOT_A_TABLE = {"ignored": None}
        return ops
