#!/usr/bin/env python3
"""Mutation checks of the trainer's fused CUDA kernels: each mutant breaks one kernel with one
edit, and trainer.cuda.kernels (test_trainer_cuda_kernels) must fail on it.

  mutants.py build [--from BUILD] [--work DIR] [--out DIR] [NAME ...]
      Builds test_trainer_cuda_kernels once per mutant (all, or the NAMEs), where the CUDA
      toolkit is (no GPU needed): the sources of HEAD in DIR/src (default build-mutants/src),
      configured as the CUDA build BUILD is (default build-cuda: its architectures, build type
      and cuDNN choice), each edit applied, the program built, copied to OUT/NAME (default
      results/mutants) and the edit undone. OUT/mutants.tsv lists them. An edit whose text is
      not found exactly once in its file stops the build (the kernel changed: update the edit).
  mutants.py run [--dir DIR] [--out FILE] [--jobs N]
      Where a GPU is: runs each mutant of DIR (default results/mutants), N at once (default 1;
      they share the GPU), and writes a Markdown
      table (default: standard output) of what each broke, the check meant to catch it, the
      checks that failed and whether it was caught (the program failed, that check among the
      failures). Exit status 0 when every mutant was caught, 1 when one was not, 77 when the
      programs skipped (no usable GPU), 2 on bad arguments.
  mutants.py list
      The mutants, a line each.
  mutants.py check
      Without building: each edit's text is in its file exactly once, and each check's name in
      the kernels' test (exit status 1 naming the stale ones): the CPU build's ctest runs it.

scripts/gpu-check.sh --mutants DIR runs them after the gpu tests.
"""
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
import subprocess
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # in the repository
    find: str  # exactly once in the file
    replace: str
    check: str  # the start of the trainer.cuda.kernels check that must fail
    what: str


MUTANTS = [
    Mutant("adamw.copy", "trainer/cuda/kernels.cu",
           "    params[i] = updated;\n    if (out != nullptr) out[i] = from_f<G>(updated);\n",
           "    if (out != nullptr) out[i] = from_f<G>(params[i]);\n    params[i] = updated;\n",
           "adamw_update(bf16 grads, bf16 copy).copy",
           "AdamW's bf16 copy written from the parameter before its update"),
    Mutant("adamw.clip", "trainer/cuda/kernels.cu",
           "const float g = __fmul_rn(to_f(grads[i]), s.grad_scale);",
           "const float g = to_f(grads[i]);",
           "adamw_update(shard).params_delta",
           "AdamW ignores the clipping scale"),
    Mutant("encoder.wte", "trainer/cuda/kernels.cu",
           "for (int j = start[g]; j < start[g + 1]; ++j)",
           "for (int j = start[g] + 1; j < start[g + 1]; ++j)",
           "encoder_backward.dwte",
           "the encoder's backward drops each token's first position"),
    Mutant("encoder.wpe", "trainer/cuda/kernels.cu",
           "for (int b = 0; b < B; ++b) acc += to_f(dout[(static_cast<size_t>(b) * Tn + t) * C + c]);",
           "for (int b = 1; b < B; ++b) acc += to_f(dout[(static_cast<size_t>(b) * Tn + t) * C + c]);",
           "encoder_backward.dwpe",
           "the encoder's backward leaves the first sequence out of dwpe"),
    Mutant("norm.square", "trainer/cuda/kernels.cu",
           "    s += x * x;\n",
           "    s += x * fabsf(x);\n",
           "sum_squares(n=",
           "the gradient norm's sum of squares keeps the sign"),
    Mutant("residual_layernorm.residual", "trainer/cuda/layernorm.cu",
           "      store_pack(residual_out + at, bits);",
           "      store_pack(residual_out + at, load_pack(a + at));",
           "residual_layernorm_forward",
           "the fused residual + LayerNorm stores the input, not the sum"),
    Mutant("xent.target", "trainer/cuda/classifier.cu",
           "x[u][k] = i < V ? (expf(x[u][k] - l) - (i == target ? 1.0f : 0.0f)) * dloss : 0.0f;",
           "x[u][k] = i < V ? expf(x[u][k] - l) * dloss : 0.0f;",
           "xent_backward",
           "the fused classifier's backward forgets the target's -1"),
    Mutant("gemm.gelu", "trainer/cuda/gemm_lt.cpp",
           "pre_gelu != nullptr ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_BIAS",
           "pre_gelu != nullptr ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_BIAS",
           "matmul_forward_gelu",
           "the GEMM's epilogue adds the bias but applies no GELU"),
    Mutant("flash.mask", "trainer/cuda/flash_attention.cu",
           "if (diagonal && (key > row || key >= Tn)) x = -INFINITY;",
           "if (diagonal && (key > row + 1 || key >= Tn)) x = -INFINITY;",
           "flash_attention_forward",
           "flash attention's forward lets each query see the next key"),
    Mutant("flash.dkdv_mask", "trainer/cuda/flash_attention.cu",
           "const bool masked = q >= Tn || (diagonal && q < key);",
           "const bool masked = q >= Tn || (diagonal && q + 1 < key);",
           "flash_attention_backward",
           "flash attention's dK/dV backward lets each query see the next key"),
]

TEST = "test_trainer_cuda_kernels"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(message):
    print(f"mutants.py: {message}", file=sys.stderr)
    sys.exit(2)


def cache_value(cache, key):
    try:
        with open(cache) as f:
            for line in f:
                name, _, value = line.rstrip("\n").partition("=")
                if name.split(":")[0] == key:
                    return value
    except OSError:
        pass
    return ""


def run(command, **kwargs):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    if done.returncode != 0:
        print(done.stdout[-4000:], file=sys.stderr)
        die(f"failed ({done.returncode}): {' '.join(command)}")
    return done.stdout


def build(args):
    source_build, work, out, names = os.path.join(ROOT, "build-cuda"), os.path.join(ROOT, "build-mutants"), \
        os.path.join(ROOT, "results", "mutants"), []
    while args:
        flag = args.pop(0)
        if flag in ("--from", "--work", "--out"):
            if not args:
                die(f"{flag} needs a folder")
            value = os.path.abspath(args.pop(0))
            if flag == "--from":
                source_build = value
            elif flag == "--work":
                work = value
            else:
                out = value
        elif flag.startswith("-"):
            die(f"unknown argument '{flag}' (see --help)")
        else:
            names.append(flag)
    chosen = [m for m in MUTANTS if not names or m.name in names]
    unknown = set(names) - {m.name for m in MUTANTS}
    if unknown:
        die(f"no mutant named {', '.join(sorted(unknown))} (mutants.py list)")
    cache = os.path.join(source_build, "CMakeCache.txt")
    if not os.path.isfile(cache):
        die(f"no CMake cache in '{source_build}': configure the CUDA build first (or --from)")
    if cache_value(cache, "COMMSCOPE_CUDA") not in ("ON", "TRUE", "1"):
        die(f"'{source_build}' is not a CUDA build (COMMSCOPE_CUDA is off)")

    src = os.path.join(work, "src")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", ROOT, "archive", "HEAD"], stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    bdir = os.path.join(src, "build-cuda")
    options = ["-DCOMMSCOPE_CUDA=ON", "-DCOMMSCOPE_WERROR=ON"]
    for key in ("CMAKE_BUILD_TYPE", "CMAKE_CUDA_ARCHITECTURES", "COMMSCOPE_CUDNN", "CMAKE_CXX_COMPILER_LAUNCHER",
                "CMAKE_CUDA_COMPILER_LAUNCHER", "NCCL_HOME"):
        value = cache_value(cache, key)
        if value:
            options.append(f"-D{key}={value}")
    print(f"configuring {bdir} ({' '.join(options)})", flush=True)
    run(["cmake", "-S", src, "-B", bdir] + options)
    os.makedirs(out, exist_ok=True)
    jobs = str(os.cpu_count() or 2)
    print(f"building {TEST} unmutated (the libraries it links)", flush=True)
    run(["cmake", "--build", bdir, "-j", jobs, "--target", TEST])
    rows = []
    for m in chosen:
        path = os.path.join(src, m.path)
        with open(path) as f:
            text = f.read()
        if text.count(m.find) != 1:
            die(f"{m.name}: the text to break is in {m.path} {text.count(m.find)} times, not once: update the edit")
        with open(path, "w") as f:
            f.write(text.replace(m.find, m.replace))
        try:
            print(f"building {m.name}: {m.what}", flush=True)
            run(["cmake", "--build", bdir, "-j", jobs, "--target", TEST])
            shutil.copy2(os.path.join(bdir, "bin", TEST), os.path.join(out, m.name))
        finally:
            with open(path, "w") as f:
                f.write(text)
        rows.append(m)
    with open(os.path.join(out, "mutants.tsv"), "w") as f:
        f.write("name\tfile\tcheck\twhat\n")
        for m in rows:
            f.write(f"{m.name}\t{m.path}\t{m.check}\t{m.what}\n")
    print(f"{len(rows)} mutants in {out} (run them where a GPU is: mutants.py run --dir {out})")
    return 0


def run_mutants(args):
    folder, out, jobs = os.path.join(ROOT, "results", "mutants"), None, 1
    while args:
        flag = args.pop(0)
        if flag in ("--dir", "--out", "--jobs") and args:
            value = args.pop(0)
            if flag == "--dir":
                folder = value
            elif flag == "--out":
                out = value
            elif value.isdigit() and int(value) > 0:
                jobs = int(value)
            else:
                die(f"--jobs needs a positive integer, not '{value}'")
        else:
            die(f"unknown or incomplete argument '{flag}' (see --help)")
    listing = os.path.join(folder, "mutants.tsv")
    if not os.path.isfile(listing):
        die(f"no mutants.tsv in '{folder}' (mutants.py build)")
    with open(listing) as f:
        entries = [line.rstrip("\n").split("\t") for line in f][1:]
    lines = ["| mutant | what is broken | check meant to fail | checks failed | caught |", "|---|---|---|---|---|"]
    def run_one(name):
        try:
            done = subprocess.run([os.path.join(folder, name)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=300)
            return done.stdout, done.returncode
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e), -1

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(run_one, [e[0] for e in entries]))
    missed = skipped = 0
    for (name, path, check, what), (output, status) in zip(entries, results):        # A check's line: name (may hold spaces), precision, error, bound, PASS or FAIL.
        failed = [line.rsplit(None, 4)[0].strip() for line in output.splitlines() if line.rstrip().endswith(" FAIL")]
        if status == 77:
            skipped += 1
            verdict = "skipped (no GPU)"
        elif status != 0 and any(f.startswith(check) for f in failed):
            verdict = "yes"
        else:
            missed += 1
            verdict = f"**no** (exit {status})"
        shown = ", ".join(failed[:4]) + (f" (+{len(failed) - 4})" if len(failed) > 4 else "")
        lines.append(f"| {name} | {what} ({path}) | {check} | {len(failed)}: {shown or '-'} | {verdict} |")
    text = "\n".join(lines) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if skipped == len(entries) and entries:
        return 77
    return 1 if missed else 0


def check():
    test = os.path.join(ROOT, "trainer", "tests", "test_cuda_kernels.cpp")
    with open(test) as f:
        test_text = f.read()
    stale = []
    for m in MUTANTS:
        with open(os.path.join(ROOT, m.path)) as f:
            found = f.read().count(m.find)
        if found != 1:
            stale.append(f"{m.name}: the text to break is in {m.path} {found} times, not once")
        name = m.check.split("(")[0].split(".")[0]
        if f'"{name}' not in test_text:
            stale.append(f"{m.name}: no check named {name}... in {os.path.relpath(test, ROOT)}")
    for line in stale:
        print(line)
    print(f"{len(MUTANTS) - len({s.split(':')[0] for s in stale})} of {len(MUTANTS)} mutants apply")
    return 1 if stale else 0


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    command = args.pop(0)
    if command == "build":
        return build(args)
    if command == "run":
        return run_mutants(args)
    if command == "check":
        return check()
    if command == "list":
        for m in MUTANTS:
            print(f"{m.name:28} {m.path:32} {m.what}")
        return 0
    die(f"unknown command '{command}' (build, run, list)")


if __name__ == "__main__":
    sys.exit(main())
