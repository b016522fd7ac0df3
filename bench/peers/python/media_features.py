"""What the picture and sound peers compute before the graph runs, written the way a Python
service would write it: Pillow for pictures, scipy and numpy for sounds. Each follows what the
model's model.toml asks of its input ([input.image] of models/digits, [input.audio] of
models/spoken-digits), so both sides of the benchmark do the same work per request.

The settings are read from the manifest itself (tomllib), not repeated here."""

import io
import math
import tomllib

import numpy as np
from PIL import Image
from scipy.io import wavfile
from scipy.signal import resample_poly


def input_spec(model_dir):
    """The manifest's [input] table of `model_dir`."""
    with open(model_dir / "model.toml", "rb") as f:
        return tomllib.load(f)["input"]


def picture(data, spec):
    """The flat float32 values of the picture file `data` as [input.image] `spec` says:
    transparency laid over the background, grey (Pillow's convert("L")), fitted by padding,
    inverted, scaled. Only what models/digits uses is written here (grey, pad, NCHW)."""
    if spec.get("color", "grayscale") != "grayscale" or spec.get("fit", "stretch") != "pad":
        raise ValueError("this peer serves grey pictures fitted by padding (models/digits)")
    background = int(spec.get("background", 0))
    width, height = int(spec["width"]), int(spec["height"])
    img = Image.open(io.BytesIO(data))
    fmt = (img.format or "unknown").lower()
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        paper = Image.new("RGBA", rgba.size, (background, background, background, 255))
        img = Image.alpha_composite(paper, rgba)
    grey = img.convert("L")
    w, h = grey.size
    if (w, h) != (width, height):
        s = min(width / w, height / h)
        nw, nh = min(max(round(w * s), 1), width), min(max(round(h * s), 1), height)
        inner = grey.resize((nw, nh), Image.Resampling.BILINEAR)
        grey = Image.new("L", (width, height), background)
        grey.paste(inner, ((width - nw) // 2, (height - nh) // 2))
    values = np.asarray(grey, dtype=np.float32)
    if spec.get("invert", False):
        values = 255.0 - values
    scale = float(spec.get("scale", 1.0))
    facts = {"format": fmt, "width": w, "height": h}
    return (values / 255.0 * scale).reshape(-1), facts


def sound(data, spec):
    """The flat float32 log-mel values of the WAV file `data` as [input.audio] `spec` says:
    mixed to mono, resampled (polyphase), silence trimmed, peak-normalized, padded or cut to
    the model's length, then the log-mel spectrogram (mel-major)."""
    rate, samples = wavfile.read(io.BytesIO(data))
    facts = {"format": "wav", "sample_rate": rate,
             "channels": 1 if samples.ndim == 1 else samples.shape[1],
             "seconds": samples.shape[0] / rate}
    if samples.dtype.kind == "i":
        samples = samples.astype(np.float32) / float(np.iinfo(samples.dtype).max + 1)
    elif samples.dtype.kind == "u":
        samples = (samples.astype(np.float32) - 128.0) / 128.0
    samples = samples.astype(np.float32)
    if samples.ndim == 2:
        samples = samples.mean(axis=1)
    target = int(spec["sample_rate"])
    if rate != target:
        g = math.gcd(rate, target)
        samples = resample_poly(samples, target // g, rate // g).astype(np.float32)
    db = spec.get("trim_silence_db")
    peak = float(np.abs(samples).max()) if samples.size else 0.0
    if db is not None and peak > 0.0:
        loud = np.flatnonzero(np.abs(samples) >= peak * 10.0 ** (-float(db) / 20.0))
        samples = samples[loud[0]:loud[-1] + 1]
        peak = float(np.abs(samples).max())
    if spec.get("normalize", False) and peak > 0.0:
        samples = samples / peak
    n = int(round(float(spec["seconds"]) * target))
    samples = np.pad(samples[:n], (0, max(0, n - samples.size)))
    return log_mel(samples, spec["log_mel"], target), facts


_FILTERS = {}


def _hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def _mel_to_hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def mel_filters(mel, rate):
    """The window and the (mels x bins) triangular filter matrix, made once per setting."""
    key = (mel["mels"], mel["window"], mel.get("fmin", 0.0), mel.get("fmax"), rate)
    if key not in _FILTERS:
        n, mels = int(mel["window"]), int(mel["mels"])
        window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)
        fmax = float(mel.get("fmax") or rate / 2)
        lo, hi = _hz_to_mel(float(mel.get("fmin", 0.0))), _hz_to_mel(fmax)
        edges = _mel_to_hz(lo + (hi - lo) * np.arange(mels + 2) / (mels + 1))
        f = np.arange(n // 2 + 1) * rate / n
        bank = np.zeros((mels, f.size))
        for m in range(mels):
            left, centre, right = edges[m:m + 3]
            rising = (f > left) & (f <= centre)
            falling = (f > centre) & (f < right)
            bank[m, rising] = (f[rising] - left) / (centre - left)
            bank[m, falling] = (right - f[falling]) / (right - centre)
        _FILTERS[key] = (window.astype(np.float32), bank.astype(np.float32))
    return _FILTERS[key]


def log_mel(samples, mel, rate):
    """ln(mel energy + 1e-6) of Hann-windowed frames (not centred), mel-major."""
    window, bank = mel_filters(mel, rate)
    n, hop = window.size, int(mel["hop"])
    frames = (max(samples.size - n, 0)) // hop + 1
    padded = np.pad(samples, (0, max(0, (frames - 1) * hop + n - samples.size)))
    idx = np.arange(n)[None, :] + hop * np.arange(frames)[:, None]
    power = np.abs(np.fft.rfft(padded[idx] * window, axis=1)) ** 2
    return np.log(bank @ power.T.astype(np.float32) + 1e-6).astype(np.float32).reshape(-1)
