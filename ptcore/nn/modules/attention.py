"""``MultiheadAttention``."""
import ptcore
import ptcore.nn.init as init
import ptcore.nn.functional as F
import ptcore.nn.functional._attention as _A
from ptcore.nn.modules.linear import NonDynamicallyQuantizableLinear
from ptcore.nn.modules.module import Module
from ptcore.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    r"""Multi-head attention (``torch.nn.MultiheadAttention``).

    Parameters
    ----------
    embed_dim, num_heads : int
        Model width and number of heads (``embed_dim % num_heads == 0``).
    dropout : float
        Dropout on the attention weights (training only).
    bias : bool
        Input/output projection biases.
    add_bias_kv : bool
        Learnable ``bias_k``/``bias_v`` appended to the key/value sequences.
    add_zero_attn : bool
        Append a zero key/value position.
    kdim, vdim : int, optional
        Key/value feature sizes (default ``embed_dim``); different sizes use
        separate ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``.
    batch_first : bool
        Inputs and outputs are ``(N, L, E)`` instead of ``(L, N, E)``.

    Notes
    -----
    Parameters are registered in PyTorch's order (``in_proj_weight``,
    ``in_proj_bias``, ``out_proj.weight`` ...) and initialised as PyTorch
    does (xavier-uniform projections, zero biases).
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(ptcore.empty((embed_dim, embed_dim), **factory_kwargs))
            self.k_proj_weight = Parameter(ptcore.empty((embed_dim, self.kdim), **factory_kwargs))
            self.v_proj_weight = Parameter(ptcore.empty((embed_dim, self.vdim), **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(ptcore.empty((3 * embed_dim, embed_dim),
                                                         **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ptcore.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(ptcore.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(ptcore.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        r"""Attend ``query`` to ``key``/``value``.

        Parameters
        ----------
        query, key, value : Tensor
            ``(L, N, E)``, ``(S, N, kdim)``, ``(S, N, vdim)`` (batch first if
            ``batch_first``), or unbatched 2-D.
        key_padding_mask : Tensor, optional
            ``(N, S)``: True (bool) or a float added to the scores.
        need_weights : bool
            Also return the attention weights.
        attn_mask : Tensor, optional
            ``(L, S)`` or ``(N*num_heads, L, S)``; True (bool) forbids attending.
        average_attn_weights : bool
            Average the returned weights over heads.
        is_causal : bool
            Hint that ``attn_mask`` is causal.

        Returns
        -------
        (Tensor, Tensor or None)
        """
        for nm, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, ptcore.Tensor):
                raise TypeError(f"MultiheadAttention: {nm} must be a Tensor, got "
                                f"{type(t).__name__}")
        is_batched = query.dim() == 3
        key_padding_mask = _A._canonical_mask(key_padding_mask, "key_padding_mask",
                                              _A._none_or_dtype(attn_mask), "attn_mask",
                                              query.dtype)
        attn_mask = _A._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                       check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight)
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        r"""Combine ``attn_mask`` and ``key_padding_mask`` into one ``(N, H, L, S)`` mask.

        Returns
        -------
        (Tensor or None, int or None)
            The merged mask and its type (1: key padding only, 2: attention mask).
        """
        mask_type = None
        merged_mask = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_mask_expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged_mask = attn_mask_expanded
            if key_padding_mask is not None:
                key_padding_mask_expanded = key_padding_mask.view(batch_size, 1, 1, seq_len) \
                    .expand(-1, self.num_heads, -1, -1)
                merged_mask = attn_mask_expanded + key_padding_mask_expanded
        return merged_mask, mask_type
