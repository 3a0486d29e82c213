# lit configuration for hologram-cc golden tests: one directory per stage, each test states
# its input, command (RUN:) and expected output (CHECK:) in one file.
import os
import lit.formats

config.name = "hologram"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hasm", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.hologram_tools_dir), "test", "lit-out")

config.substitutions.append(("%hologram-cc", os.path.join(config.hologram_tools_dir, "hologram-cc", "hologram-cc")))
config.substitutions.append(("%hologram-run", os.path.join(config.hologram_tools_dir, "hologram-run", "hologram-run")))
config.substitutions.append(("%same-failure", "python3 " + os.path.join(config.hologram_src_root, "test", "lit", "same_failure.py") + " " + os.path.join(config.hologram_tools_dir, "hologram-run", "hologram-run")))
config.substitutions.append(("%hologram-info", os.path.join(config.hologram_tools_dir, "hologram-info", "hologram-info")))
config.substitutions.append(("%hologram-py2json", "python3 " + os.path.join(config.hologram_src_root, "tools", "hologram-py2json", "hologram-py2json.py")))
config.substitutions.append(("%corpus", os.path.join(config.hologram_src_root, "test", "conformance", "kernels")))
config.substitutions.append(("%examples", os.path.join(config.hologram_src_root, "examples")))
# PTX is assembled by NVIDIA's ptxas where the CUDA toolkit is installed (feature "ptxas").
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
config.environment["PATH"] = os.pathsep.join([config.llvm_tools_dir, config.environment.get("PATH", "")])
# Programs the tools compile at run time are cached in the build tree, not the user's cache.
config.environment["HOLOGRAM_CACHE_DIR"] = os.path.join(config.test_exec_root, "compile-cache")
