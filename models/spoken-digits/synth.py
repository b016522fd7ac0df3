"""The spoken-digits corpus, synthesised here with espeak-ng: the words zero to nine in several
English accents and voice variants, at random speeds and pitches, with white noise at a random
signal-to-noise ratio and a random gain. Seeded, so the same corpus comes back every time
(espeak-ng itself is deterministic for a given version).

A voice is an accent (espeak-ng's English voices) with a variant (its timbre: +m1, +f2 ...).
The held-out voices combine accents and variants that training never hears, so the held-out
accuracy measures voices the model has not met, not new takes of familiar ones."""

import shutil
import subprocess
import sys
import wave

import numpy as np

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TRAIN_ACCENTS = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-us-nyc"]
TRAIN_VARIANTS = ["m1", "m3", "m5", "m6", "m7", "f1", "f3", "f5", "klatt", "edward", "iven",
                  "quincy", "john", "max", "steph", "linda"]
HELD_OUT_ACCENTS = ["en-029", "en-gb-x-gbcwmd"]
HELD_OUT_VARIANTS = ["m2", "m4", "f2", "f4"]
TAKES = 2  # per training voice and word, each at its own speed, pitch, noise and gain
HELD_OUT_TAKES = 5  # per held-out voice and word: a larger test of fewer voices
SPEEDS = (130, 210)  # words per minute (espeak-ng's default is 175)
PITCHES = (30, 75)  # espeak-ng's 0..99 (default 50)
SNR_DB = (15, 40)  # white noise this far below the speech's power
GAIN = (0.1, 0.9)  # the loudest sample's level, of full scale
LEAD_SECONDS = (0.0, 0.15)  # silence (then noise) before the word
TAIL_SECONDS = 0.1  # kept after the word's last loud sample
RATE = 22050  # espeak-ng's own rate, kept in the files: serving resamples


def require_espeak():
    if shutil.which("espeak-ng") is None:
        sys.exit("espeak-ng is not installed: on Debian or Ubuntu, `apt-get install -y "
                 "espeak-ng` (as root), then run this script again")
    version = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True,
                             check=True).stdout
    return version.split("Data at:")[0].strip()  # without this machine's data path


def speak(voice, speed, pitch, word, scratch):
    """espeak-ng's rendering of `word` as float samples in -1..1 at its own rate."""
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w",
                    str(scratch), word], check=True)
    with wave.open(str(scratch)) as w:
        assert w.getframerate() == RATE and w.getnchannels() == 1 and w.getsampwidth() == 2
        raw = w.readframes(w.getnframes())
    return np.frombuffer(raw, dtype="<i2").astype(np.float64) / 32768


def take(samples, rng):
    """One noisy take of a clean rendering: its trailing silence cut, random leading silence,
    white noise at a random SNR over the whole of it, a random gain."""
    peak = np.abs(samples).max()
    loud = np.nonzero(np.abs(samples) >= peak * 0.01)[0]
    word = samples[: min(len(samples), loud[-1] + int(TAIL_SECONDS * RATE))]
    lead = np.zeros(int(rng.uniform(*LEAD_SECONDS) * RATE))
    sound = np.concatenate([lead, word])
    power = np.mean(word[loud[0]:] ** 2)
    snr = rng.uniform(*SNR_DB)
    sound = sound + rng.normal(0.0, np.sqrt(power / 10 ** (snr / 10)), len(sound))
    sound *= rng.uniform(*GAIN) / np.abs(sound).max()
    return sound, snr


def write_wav(path, samples, rate=RATE):
    """16-bit mono PCM."""
    pcm = np.clip(np.round(samples * 32767), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


def voices(accents, variants):
    return [f"{a}+{v}" for a in accents for v in variants]


def corpus(directory, seed):
    """Writes every take under `directory`; returns one record per file (path, word, voice,
    held_out, speed, pitch, snr)."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    scratch = directory / "espeak.wav"
    records = []
    sets = [(v, False) for v in voices(TRAIN_ACCENTS, TRAIN_VARIANTS)]
    sets += [(v, True) for v in voices(HELD_OUT_ACCENTS, HELD_OUT_VARIANTS)]
    for voice, held_out in sets:
        for word in WORDS:
            for n in range(HELD_OUT_TAKES if held_out else TAKES):
                speed, pitch = int(rng.integers(*SPEEDS)), int(rng.integers(*PITCHES))
                sound, snr = take(speak(voice, speed, pitch, word, scratch), rng)
                path = directory / f"{voice.replace('+', '_')}-{word}-{n}.wav"
                write_wav(path, sound)
                records.append({"path": path, "word": word, "voice": voice,
                                "held_out": held_out, "speed": speed, "pitch": pitch,
                                "snr": round(snr, 1), "seconds": len(sound) / RATE})
    scratch.unlink()
    return records
