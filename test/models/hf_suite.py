"""The Hugging Face architectures of zeroc's model suite: tiny, randomly
initialized, deterministic (seeded) configurations, each wrapped so that its
forward takes the graph inputs and returns the training loss.

Used by gen_hf_suite.py (which exports and trains them) and importable on
its own: `build(name)` -> (module, example inputs dict).
"""

import torch

MB, T, V = 2, 8, 61   # micro batch, sequence length, vocabulary


def _ids(seed, high=V, shape=(MB, T)):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, high, shape, generator=g)


def _causal_lm(cls, cfg):
    def build():
        torch.manual_seed(0)
        m = cls(cfg)
        ids = _ids(1)
        return m, {"input_ids": ids, "labels": ids}
    return build


def _registry():
    import transformers as tf
    eager = dict(attn_implementation="eager")
    small = dict(vocab_size=V)
    r = {}
    r["gpt2"] = _causal_lm(tf.GPT2LMHeadModel, tf.GPT2Config(
        n_layer=2, n_head=2, n_embd=32, n_positions=16, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
        **small, **eager))
    r["llama"] = _causal_lm(tf.LlamaForCausalLM, tf.LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1,
        max_position_embeddings=16, bos_token_id=0, eos_token_id=0,
        pad_token_id=None, **small, **eager))
    r["mistral"] = _causal_lm(tf.MistralForCausalLM, tf.MistralConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, sliding_window=None,
        max_position_embeddings=16, bos_token_id=0, eos_token_id=0,
        **small, **eager))
    r["qwen2"] = _causal_lm(tf.Qwen2ForCausalLM, tf.Qwen2Config(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1,
        max_position_embeddings=16, bos_token_id=0, eos_token_id=0,
        tie_word_embeddings=True, **small, **eager))
    r["gpt_neox"] = _causal_lm(tf.GPTNeoXForCausalLM, tf.GPTNeoXConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, max_position_embeddings=16, rotary_pct=0.5,
        hidden_dropout=0.0, attention_dropout=0.0, bos_token_id=0,
        eos_token_id=0, **small, **eager))
    r["opt"] = _causal_lm(tf.OPTForCausalLM, tf.OPTConfig(
        hidden_size=32, ffn_dim=64, num_hidden_layers=2,
        num_attention_heads=2, max_position_embeddings=16, dropout=0.0,
        attention_dropout=0.0, word_embed_proj_dim=32, pad_token_id=1,
        bos_token_id=0, eos_token_id=0, **small, **eager))

    def bert_mlm():
        torch.manual_seed(0)
        m = tf.BertForMaskedLM(_bert_cfg(tf))
        ids = _ids(1)
        labels = torch.where(_ids(2, 4) == 0, ids, torch.full_like(ids, -100))
        return m, {"input_ids": ids, "labels": labels}
    r["bert_mlm"] = bert_mlm

    def bert_cls():
        torch.manual_seed(0)
        cfg = _bert_cfg(tf)
        cfg.num_labels = 3
        m = tf.BertForSequenceClassification(cfg)
        return m, {"input_ids": _ids(1), "labels": _ids(2, 3, (MB,))}
    r["bert_cls"] = bert_cls

    def vit():
        torch.manual_seed(0)
        m = tf.ViTForImageClassification(tf.ViTConfig(
            image_size=8, patch_size=4, num_channels=3, hidden_size=32,
            num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            num_labels=3, **eager))
        g = torch.Generator().manual_seed(1)
        return m, {"pixel_values": torch.randn(MB, 3, 8, 8, generator=g),
                   "labels": _ids(2, 3, (MB,))}
    r["vit"] = vit

    def resnet():
        torch.manual_seed(0)
        m = tf.ResNetForImageClassification(tf.ResNetConfig(
            num_channels=3, embedding_size=8, hidden_sizes=[8, 16],
            depths=[1, 1], layer_type="basic", num_labels=3))
        g = torch.Generator().manual_seed(1)
        return m, {"pixel_values": torch.randn(MB, 3, 16, 16, generator=g),
                   "labels": _ids(2, 3, (MB,))}
    r["resnet"] = resnet

    def t5():
        torch.manual_seed(0)
        m = tf.T5ForConditionalGeneration(tf.T5Config(
            d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2,
            dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0,
            relative_attention_num_buckets=8, **small))
        return m, {"input_ids": _ids(1), "labels": _ids(2)}
    r["t5"] = t5
    return r


def _bert_cfg(tf):
    return tf.BertConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=16,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        vocab_size=V, attn_implementation="eager")


NAMES = ["gpt2", "llama", "mistral", "qwen2", "gpt_neox", "opt", "bert_mlm",
         "bert_cls", "vit", "resnet", "t5"]


def build(name):
    return _registry()[name]()
