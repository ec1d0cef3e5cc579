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

def fuzz_replay_test(name, deps):
    """`<name>_replay`: fuzz/<name>_fuzz.cc's entry point on every file of fuzz/<name>/corpus once."""
    native.cc_test(
        name = name + "_replay",
        srcs = [name + "_fuzz.cc", "replay_main.cc"],
        deps = deps,
        data = native.glob([name + "/corpus/**"]),
        args = ["fuzz/" + name + "/corpus"],
        size = "small",
        linkopts = ["-rdynamic"],
    )
