"""Held-out architectures (not in the committed suite): Phi, Gemma, BLOOM,
RoBERTa (masked LM) and GPT-J, tiny and random-init, exported by the helper
with current torch, written as a suite directory that test/e2e/hf_suite.py
runs (with the original modules' AdamW losses):

    .venv-export/bin/python test/models/heldout_check.py OUT
    /usr/bin/python3 test/e2e/hf_suite.py --zeroc build/bin/zeroc --suite OUT --work W --full

Not part of make test (it needs transformers from PyPI).
"""
import sys, json, os, torch  # noqa: E401
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python")); sys.path.insert(0, HERE)
import transformers as tf, gen_hf_suite as g, hf_suite
from zeroc_torch.export import export
V=hf_suite.V
def lm(cls, cfg):
    torch.manual_seed(0); m = cls(cfg); ids = hf_suite._ids(1); return m, {"input_ids": ids, "labels": ids}
eager=dict(attn_implementation="eager")
arch = {
 "phi": lambda: lm(tf.PhiForCausalLM, tf.PhiConfig(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=16, resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0, **eager)),
 "gemma": lambda: lm(tf.GemmaForCausalLM, tf.GemmaConfig(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=16, **eager)),
 "bloom": lambda: lm(tf.BloomForCausalLM, tf.BloomConfig(vocab_size=V, hidden_size=32, n_layer=2, n_head=2, hidden_dropout=0.0, attention_dropout=0.0, **eager)),
 "roberta": None,
 "distilbert": None,
}
def roberta():
    torch.manual_seed(0)
    m = tf.RobertaForMaskedLM(tf.RobertaConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=20, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1, **eager))
    ids = hf_suite._ids(1); ids[ids == 1] = 2
    return m, {"input_ids": ids, "labels": ids}
def gptj():
    return lm(tf.GPTJForCausalLM, tf.GPTJConfig(vocab_size=V, n_embd=32, n_layer=2, n_head=2, rotary_dim=8, n_positions=16, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **eager))
arch["roberta"] = roberta; arch["gptj"] = gptj; del arch["distilbert"]
out = sys.argv[1]
st = {}
for name, b in arch.items():
    try:
        module, ex = b()
        adir = os.path.join(out, name); vdir = os.path.join(adir, "helper_ts17"); os.makedirs(vdir, exist_ok=True)
        data = g.samples(name if name != "roberta" else "x", ex)
        if name == "roberta":
            for k in data: data[k][data[k] == 1] = 2
        import numpy as np
        os.makedirs(os.path.join(adir, "data-torch2"), exist_ok=True)
        for k, v in data.items(): np.save(os.path.join(adir, "data-torch2", k + ".npy"), v.numpy())
        json.dump(g.DS_CONFIG, open(os.path.join(adir, "ds_config.json"), "w"))
        init = {k: v.clone() for k, v in module.state_dict().items()}
        export(module, ex, os.path.join(vdir, "model.onnx"), quiet=True)
        module.load_state_dict(init)
        losses, _ = g.train_reference(module, list(ex), data)
        json.dump({"steps": g.STEPS, "gas": g.GAS, "losses": losses}, open(os.path.join(adir, "expected-torch2.json"), "w"))
        st[name + "/helper_ts17"] = "train"; print(name, "exported")
    except Exception as e:
        print(name, "FAILED", type(e).__name__, str(e)[:200])
json.dump(st, open(os.path.join(out, "status.json"), "w"))
