"""REPORT.md of the spoken digit classifier, from the numbers train.py measured."""

import synth

LABELS = [str(d) for d in range(10)]


def write_report(path, f, examples):
    within = float((f["held_out_distance"] <= f["max_distance"]).mean())
    header = "| true \\ predicted | " + " | ".join(LABELS) + " |"
    rows = [f"| **{label}** ({synth.WORDS[i]}) | " + " | ".join(str(v) for v in row) + " |"
            for i, (label, row) in enumerate(zip(LABELS, f["confusion"]))]
    lines = [
        "# Spoken digits: training report", "",
        "Written by `train.py`; numbers are measured on the exported graph (`model.onnx`, run by "
        "onnxruntime) fed by `media-features`, the code that serves it.", "",
        "**This model has only ever heard a speech synthesizer.** Every training and test sound "
        f"was made here by {f['espeak']}. It is untested on human voices, and real recordings "
        "(other microphones, rooms, accents, children, background speech) should be expected to "
        "score much worse than the number below.", "",
        "## Data", "",
        f"The words {', '.join(synth.WORDS)}, one per file, spoken by espeak-ng. A voice is an "
        "accent (espeak-ng's English voices) with a variant (its timbre). Each take has its own "
        f"speed ({synth.SPEEDS[0]}-{synth.SPEEDS[1]} words per minute), pitch "
        f"({synth.PITCHES[0]}-{synth.PITCHES[1]} of espeak-ng's 0-99), up to "
        f"{synth.LEAD_SECONDS[1]} s of leading silence, white noise at {synth.SNR_DB[0]}-"
        f"{synth.SNR_DB[1]} dB below the speech and a random gain; files are 16-bit mono at "
        f"{synth.RATE} Hz, espeak-ng's own rate (serving resamples to 16 kHz).", "",
        f"- Training: {len(synth.TRAIN_ACCENTS)} accents ({', '.join(synth.TRAIN_ACCENTS)}) x "
        f"{len(synth.TRAIN_VARIANTS)} variants ({', '.join(synth.TRAIN_VARIANTS)}) x 10 words x "
        f"{synth.TAKES} takes = {f['n_train']} files, each learnt twice: as synthesised and "
        "resampled to 8 kHz (the telephone band: nothing above 4 kHz), so a small 8 kHz file "
        "is not a stranger.",
        f"- Held out by voice: {len(synth.HELD_OUT_ACCENTS)} accents "
        f"({', '.join(synth.HELD_OUT_ACCENTS)}) x {len(synth.HELD_OUT_VARIANTS)} variants "
        f"({', '.join(synth.HELD_OUT_VARIANTS)}) x 10 words x {synth.HELD_OUT_TAKES} takes = "
        f"{f['n_test']} files, tested as synthesised and at 8 kHz ({2 * f['n_test']} in all). "
        "Neither these accents nor these variants occur in training.", "",
        "## Features and model", "",
        "As `[input.audio]` says, and as serving computes them: resampled to 16 kHz, cut to the "
        "part within 20 dB of the loudest sample, scaled to a peak of 1, padded with silence or "
        "cut to 1 s, then a log-mel spectrogram of 20 mel bands (0-8000 Hz) over 25 frames of "
        f"640 samples (40 ms, no overlap): {f['features']} values per sound. The frames are "
        "coarse on purpose: the model and its domain file stay small.", "",
        "scikit-learn `StandardScaler` then `SVC` (RBF kernel, C = 1, gamma 'scale', "
        f"`probability=True`, seed {f['seed']} for the probabilities' calibration; "
        f"{f['support_vectors']} support vectors), exported with skl2onnx's default options "
        f"(graph input `[N, {f['features']}]` float; `model.onnx`: {f['onnx_bytes']} bytes). "
        "The answer is the SVM's vote, as scikit-learn and onnxruntime give it; its "
        "probabilities come from Platt scaling and now and then favour another digit than the "
        "vote. In trials on the same rows a one-layer MLP (128 units) read 0.87 of the "
        "held-out files where the SVM read 0.92.", "",
        "## Held-out accuracy (voices never heard in training)", "",
        f"**{f['accuracy']:.4f}** ({round(f['accuracy'] * 2 * f['n_test'])} of "
        f"{2 * f['n_test']} files): {f['accuracy_wide']:.4f} of the files as synthesised "
        f"(22,050 Hz), {f['accuracy_narrow']:.4f} of the same at 8 kHz. It varies by voice "
        "(below), so it depends on which voices are held out.", "",
        "| held-out voice | accuracy |", "|---|---|",
        *[f"| {v} | {a:.2f} |" for v, a in f["per_voice"].items()], "",
        header, "|" + "---|" * 11, *rows, "",
        "## Applicability domain", "",
        "Each answer carries the Euclidean distance (in the graph's input values, the log-mel "
        "spectrogram) from the sound to its nearest training sound. `training_features.f32` "
        "holds the first take of every training voice and word, as synthesised and at 8 kHz "
        f"({f['n_domain']} rows of the {2 * f['n_train']} learnt, to keep the file small). "
        f"`max_distance` = **{f['max_distance']}** is the {f['domain_percentile']}th percentile "
        f"of the held-out sounds' nearest distance, both bands ({within:.1%} of them are within "
        "it); "
        "farther, the answer is flagged outside the domain. The domain is measured against "
        "synthetic speech: a human recording may well land inside it and still be misread.", "",
        "## Test examples", "",
        "| example | true | bytes | nearest training distance | in domain |",
        "|---|---|---|---|---|",
        *[f"| {e['name']} | {e['category']} | {e['bytes']} | {e['distance']:.3f} | "
          f"{e['in_domain']} |" for e in examples], "",
        "Distances here are from `media-features` run natively. The served component computes "
        "the same features as WebAssembly, whose FFTs (scalar, not AVX) and logarithms round a "
        "little differently: the training file is served at about 3e-5, not exactly 0.",
        "", "## What the model cannot do", "",
        "- Human speech is untested: it learnt espeak-ng's synthetic voices only. Expect much "
        "worse accuracy on real recordings; measure on your own before relying on it.",
        "- One English digit word per recording, within about 1 s once the silence around it "
        "is cut; a longer sound is cut at 1 s, and a sentence is outside what it learnt.",
        "- Silence is cut by level (20 dB below the peak): loud background noise or speech "
        "before or after the word keeps it from being cut and shifts the word in time.",
        "- It always answers one of 0-9, whatever the sound (check `in_domain` and the "
        "probabilities).",
    ]
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
