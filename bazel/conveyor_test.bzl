"""conveyor_test: a gtest binary; gpu = True tags it `gpu` (it skips, with a reason, without a GPU)."""

def conveyor_test(name, srcs, deps = [], gpu = False, tags = [], data = [], size = "small", **kwargs):
    native.cc_test(
        name = name,
        srcs = srcs,
        deps = deps + [
            "//tests/util:gpu_test",
            "@system//:gtest_main",
            "@system//:gmock",
        ],
        tags = tags + (["gpu"] if gpu else []),
        data = data,
        size = size,
        # Plugins resolve the core's symbols from the test executable.
        linkopts = ["-rdynamic"],
        **kwargs
    )
