"""Trained weights from zeroc back into PyTorch.

    zeroc to-fp32 ckpt/ weights.safetensors
    from zeroc_torch.weights import load_fp32
    load_fp32(model, "weights.safetensors")      # model.load_state_dict(strict)

`zeroc to-fp32` writes each tensor once under the model's state_dict names
(as safetensors' own save_model does with tied weights) and lists the other
names of tied weights in __metadata__ "zeroc.aliases"; load_fp32 gives them
their values again so that a strict load_state_dict accepts the file. The
reader needs only numpy (no safetensors package).
"""
import json
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
           "I64": np.int64, "I32": np.int32, "U8": np.uint8, "BOOL": np.bool_}


def read_safetensors(path):
    """(name -> numpy array, __metadata__ dict) of a safetensors file."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError("%s: too short for safetensors" % path)
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise ValueError("%s: header length %d exceeds the file" % (path, n))
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    for name, t in header.items():
        if t["dtype"] not in _DTYPES:
            raise ValueError("%s: tensor %s has dtype %s" % (path, name, t["dtype"]))
        b, e = t["data_offsets"]
        arr = np.frombuffer(raw[8 + n + b:8 + n + e], _DTYPES[t["dtype"]])
        out[name] = arr.reshape(t["shape"]).copy()
    return out, meta


def state_dict_from(path):
    """The file's tensors as a torch state_dict, tied names included."""
    import torch
    arrays, meta = read_safetensors(path)
    state = {k: torch.from_numpy(v) for k, v in arrays.items()}
    for alias, name in json.loads(meta.get("zeroc.aliases", "{}")).items():
        if name in state and alias not in state:
            state[alias] = state[name]
    return state


def load_fp32(module, path, strict=True):
    """module.load_state_dict of `zeroc to-fp32`'s file; returns its result."""
    return module.load_state_dict(state_dict_from(path), strict=strict)
