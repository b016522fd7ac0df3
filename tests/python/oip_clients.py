"""Calls models through the Open Inference Protocol with the standard clients, as their users
would: tritonclient's HTTP client and KServe's InferenceRESTClient, each with its default
arguments, and prints every output it got as JSON, per client and mode, with every error.

Run by tests/tests/models/oip_clients/ with the environment target/test-python-oip
(tests/python/oip-requirements.txt). The test decides what to send and compares the outputs
with v1.2 /predict's itself; this script only drives the clients and reports.

Input (a file named as the only argument, or standard input), JSON:
  {"calls": [{"url": "http://127.0.0.1:5100" or "http://127.0.0.1:3000/models/iris",
              "model": "iris",
              "inputs": [{"name": "features", "datatype": "FP32", "shape": [3, 4],
                          "data": [flat row-major elements], "file": false}],
              "outputs": ["label", "probabilities", "in_domain"]}]}
A BYTES input's elements are text, or with "file": true a file's bytes in base64: sent as the
raw bytes in binary and as the base64 text in JSON (JSON cannot carry raw bytes).

Output, JSON on standard output:
  {"answers": [{"url", "model", "client", "mode",
                "outputs": {"name": {"datatype", "shape", "data": [flat elements]}}}],
   "errors": [{"url", "model", "client", "call", "error"}],
   "calls": <how many client calls were made>}
A BYTES output's elements are printed as text (every output here is UTF-8).
"""

import asyncio
import base64
import json
import sys
import traceback

import numpy as np
import tritonclient.http as triton
from kserve import InferenceRESTClient, InferInput, InferRequest, RESTConfig
from kserve.protocol.infer_type import RequestedOutput

NUMPY = {
    "BOOL": np.bool_,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
    "BYTES": np.object_,
}


class Report:
    """Every answer and error, in the order the calls were made."""

    def __init__(self):
        self.answers = []
        self.errors = []
        self.calls = 0

    def error(self, call, what, message):
        self.errors.append(
            {
                "url": call["url"],
                "model": call["model"],
                "client": what[0],
                "call": what[1],
                "error": message,
            }
        )

    def attempt(self, call, what, run):
        """Runs `run()`, counting the call; an exception is recorded as an error, not raised."""
        self.calls += 1
        try:
            return run()
        except Exception as e:  # every failure is a finding to report, whatever its type
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            self.error(call, what, detail)
            return None

    async def attempt_async(self, call, what, run):
        self.calls += 1
        try:
            return await run()
        except Exception as e:
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            self.error(call, what, detail)
            return None

    def expect_true(self, call, what, value):
        """A health or readiness call that answered, but not `True`, is an error too."""
        if value is not None and value is not True:
            self.error(call, what, f"answered {value!r}, not True")


def tensor(spec, binary):
    """The numpy array of an input: a file's raw bytes in binary, its base64 text in JSON."""
    shape = spec["shape"]
    if spec["datatype"] != "BYTES":
        return np.array(spec["data"], dtype=NUMPY[spec["datatype"]]).reshape(shape)
    if spec.get("file") and binary:
        elements = [base64.b64decode(e) for e in spec["data"]]
    else:
        elements = [e.encode("utf-8") for e in spec["data"]]
    array = np.empty(len(elements), dtype=np.object_)
    array[:] = elements
    return array.reshape(shape)


def plain(values):
    """Flat, JSON-ready elements of a numpy array (text for BYTES)."""
    out = []
    for v in np.asarray(values).flatten().tolist():
        if isinstance(v, bytes):
            v = v.decode("utf-8")
        out.append(v)
    return out


def triton_outputs(result):
    response = result.get_response()
    outputs = {}
    for o in response["outputs"]:
        outputs[o["name"]] = {
            "datatype": o["datatype"],
            "shape": o["shape"],
            "data": plain(result.as_numpy(o["name"])),
        }
    return outputs


def kserve_outputs(result):
    return {
        o.name: {"datatype": o.datatype, "shape": o.shape, "data": plain(o.as_numpy())}
        for o in result.outputs
    }


def triton_calls(call, report):
    """tritonclient.http, default arguments: health, metadata, and inference in three modes
    and with each output asked for alone."""
    url = call["url"].split("://", 1)[1]
    model = call["model"]
    client = triton.InferenceServerClient(url)
    what = lambda name: ("tritonclient", name)  # noqa: E731
    try:
        for name, run in [
            ("is_server_live", client.is_server_live),
            ("is_server_ready", client.is_server_ready),
            ("is_model_ready", lambda: client.is_model_ready(model)),
        ]:
            report.expect_true(call, what(name), report.attempt(call, what(name), run))
        metadata = report.attempt(
            call, what("get_model_metadata"), lambda: client.get_model_metadata(model)
        )
        version = ""
        if metadata is not None:
            version = (metadata.get("versions") or [""])[0]
            if metadata.get("name") != model:
                report.error(call, what("get_model_metadata"), f"names {metadata.get('name')!r}")
        if version:
            report.expect_true(
                call,
                what("is_model_ready(version)"),
                report.attempt(
                    call,
                    what("is_model_ready(version)"),
                    lambda: client.is_model_ready(model, version),
                ),
            )
        report.attempt(call, what("get_server_metadata"), client.get_server_metadata)

        def inputs(binary):
            made = []
            for spec in call["inputs"]:
                i = triton.InferInput(spec["name"], spec["shape"], spec["datatype"])
                if binary:
                    i.set_data_from_numpy(tensor(spec, True))
                else:
                    i.set_data_from_numpy(tensor(spec, False), binary_data=False)
                made.append(i)
            return made

        def requested(**binary):
            return [triton.InferRequestedOutput(n, **binary) for n in call["outputs"]]

        # (mode, binary inputs, infer's other arguments)
        modes = [
            # The defaults: binary inputs, no outputs named (so every output in binary).
            ("binary", True, {}),
            # JSON tensors both ways (inputs, and each requested output with
            # binary_data=False), named by the model's version.
            ("json", False, {"model_version": version, "outputs": requested(binary_data=False)}),
            # Requested outputs with their default (binary), inputs in JSON.
            ("requested-binary", False, {"outputs": requested()}),
        ]
        # Each output asked for alone (a model may answer one output by a cheaper request).
        for n in call["outputs"]:
            modes.append((f"alone:{n}", True, {"outputs": [triton.InferRequestedOutput(n)]}))
        for mode, binary, kwargs in modes:
            request_id = f"{model}-{mode}"
            result = report.attempt(
                call,
                what(f"infer {mode}"),
                lambda: client.infer(model, inputs(binary), request_id=request_id, **kwargs),
            )
            if result is None:
                continue
            echoed = result.get_response().get("id")
            if echoed != request_id:
                report.error(call, what(f"infer {mode}"), f"id {echoed!r}, sent {request_id!r}")
            outputs = report.attempt(call, what(f"read {mode}"), lambda: triton_outputs(result))
            if outputs is not None:
                report.answers.append(answer(call, "tritonclient", mode, outputs))
    finally:
        client.close()


async def kserve_calls(call, report):
    """KServe's InferenceRESTClient on protocol v2: health, readiness, inference."""
    url = call["url"]
    model = call["model"]
    client = InferenceRESTClient(RESTConfig(protocol="v2"))
    what = lambda name: ("kserve", name)  # noqa: E731
    try:
        for name, run in [
            ("is_server_live", lambda: client.is_server_live(url)),
            ("is_server_ready", lambda: client.is_server_ready(url)),
            ("is_model_ready", lambda: client.is_model_ready(url, model)),
        ]:
            report.expect_true(call, what(name), await report.attempt_async(call, what(name), run))

        def request(binary, mode, outputs=None):
            made = []
            for spec in call["inputs"]:
                i = InferInput(spec["name"], spec["shape"], spec["datatype"])
                i.set_data_from_numpy(tensor(spec, binary), binary_data=binary)
                made.append(i)
            return InferRequest(
                model, made, request_id=f"{model}-{mode}", request_outputs=outputs
            )

        modes = [
            ("binary", lambda: request(True, "binary")),
            ("json", lambda: request(False, "json")),
            (
                "requested-binary",
                lambda: request(
                    True,
                    "requested-binary",
                    [RequestedOutput(n, {"binary_data": True}) for n in call["outputs"]],
                ),
            ),
        ]
        for mode, make in modes:
            result = await report.attempt_async(
                call, what(f"infer {mode}"), lambda: client.infer(url, make(), model)
            )
            if result is None:
                continue
            if result.id != f"{model}-{mode}":
                report.error(call, what(f"infer {mode}"), f"id {result.id!r}")
            outputs = report.attempt(call, what(f"read {mode}"), lambda: kserve_outputs(result))
            if outputs is not None:
                report.answers.append(answer(call, "kserve", mode, outputs))
    finally:
        await client.close()


def answer(call, client, mode, outputs):
    return {
        "url": call["url"],
        "model": call["model"],
        "client": client,
        "mode": mode,
        "outputs": outputs,
    }


def main():
    source = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    calls = json.load(source)["calls"]
    report = Report()
    for call in calls:
        triton_calls(call, report)
        asyncio.run(kserve_calls(call, report))
    json.dump(
        {"answers": report.answers, "errors": report.errors, "calls": report.calls},
        sys.stdout,
    )


if __name__ == "__main__":
    main()
