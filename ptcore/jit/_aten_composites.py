"""ATen operators of TorchScript archives that ptcore runs as compositions
of its table ops: the Transformer fast path that torch's scripted
``TransformerEncoderLayer`` and ``MultiheadAttention`` take in eval mode
(``aten::_transformer_encoder_layer_fwd``, ``aten::_native_multi_head_attention``)
and the resampling ops (``aten::upsample_*``).  The archive reader compiles
these functions (ptcore's own code, never the file's) inline with the
archive's arguments, so their ops become graph nodes."""
import math
from typing import List, Optional

import ptcore
from ptcore import Tensor
import ptcore.nn.functional as F

__all__ = ["COMPOSITES"]


def _apply_mask(scores: Tensor, mask: Optional[Tensor], mask_type: Optional[int]):
    """``mask`` of the fast path: (L, S) (type 0), key padding (B, S) (type
    1) or merged (B, H, L, S) (type 2); boolean True hides a key, a float
    mask is added."""
    if mask is None:
        return scores
    if mask_type == 1 or (mask_type is None and mask.dim() == 2 and
                          mask.size(0) == scores.size(0) and mask.size(0) != scores.size(2)):
        mask = mask.view(mask.size(0), 1, 1, mask.size(1))
    elif mask.dim() == 3:
        mask = mask.view(scores.size(0), -1, mask.size(1), mask.size(2))
    if mask.dtype == ptcore.bool:
        return scores.masked_fill(mask, float("-inf"))
    return scores + mask


def native_multi_head_attention(query: Tensor, key: Tensor, value: Tensor, embed_dim: int,
                                num_head: int, qkv_weight: Tensor, qkv_bias: Tensor,
                                proj_weight: Tensor, proj_bias: Tensor,
                                mask: Optional[Tensor] = None, need_weights: bool = True,
                                average_attn_weights: bool = True,
                                mask_type: Optional[int] = None):
    """(B, L, E) query, (B, S, E) key/value -> (output, weights or None)."""
    B = query.size(0)
    L = query.size(1)
    S = key.size(1)
    hd = embed_dim // num_head
    w_q, w_k, w_v = qkv_weight.chunk(3, 0)
    b_q, b_k, b_v = qkv_bias.chunk(3, 0)
    q = F.linear(query, w_q, b_q).view(B, L, num_head, hd).transpose(1, 2)
    k = F.linear(key, w_k, b_k).view(B, S, num_head, hd).transpose(1, 2)
    v = F.linear(value, w_v, b_v).view(B, S, num_head, hd).transpose(1, 2)
    scores = ptcore.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
    p = ptcore.softmax(_apply_mask(scores, mask, mask_type), -1)
    out = ptcore.matmul(p, v).transpose(1, 2).reshape(B, L, embed_dim)
    out = F.linear(out, proj_weight, proj_bias)
    if need_weights:
        if average_attn_weights:
            return out, p.mean(1)
        return out, p
    return out, None


def transformer_encoder_layer_fwd(src: Tensor, embed_dim: int, num_heads: int,
                                  qkv_weight: Tensor, qkv_bias: Tensor, proj_weight: Tensor,
                                  proj_bias: Tensor, use_gelu: bool, norm_first: bool,
                                  eps: float, norm_weight_1: Tensor, norm_bias_1: Tensor,
                                  norm_weight_2: Tensor, norm_bias_2: Tensor,
                                  ffn_weight_1: Tensor, ffn_bias_1: Tensor,
                                  ffn_weight_2: Tensor, ffn_bias_2: Tensor,
                                  mask: Optional[Tensor] = None, mask_type: Optional[int] = None):
    """One batch-first TransformerEncoderLayer in eval mode (no dropout)."""
    x = src
    if norm_first:
        h = F.layer_norm(x, [embed_dim], norm_weight_1, norm_bias_1, eps)
        x = x + native_multi_head_attention(h, h, h, embed_dim, num_heads, qkv_weight, qkv_bias,
                                            proj_weight, proj_bias, mask, False, True,
                                            mask_type)[0]
        h = F.layer_norm(x, [embed_dim], norm_weight_2, norm_bias_2, eps)
        h = F.linear(h, ffn_weight_1, ffn_bias_1)
        h = F.gelu(h) if use_gelu else F.relu(h)
        return x + F.linear(h, ffn_weight_2, ffn_bias_2)
    a = native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias,
                                    proj_weight, proj_bias, mask, False, True, mask_type)[0]
    x = F.layer_norm(x + a, [embed_dim], norm_weight_1, norm_bias_1, eps)
    h = F.linear(x, ffn_weight_1, ffn_bias_1)
    h = F.gelu(h) if use_gelu else F.relu(h)
    return F.layer_norm(x + F.linear(h, ffn_weight_2, ffn_bias_2), [embed_dim],
                        norm_weight_2, norm_bias_2, eps)


def upsample_nearest(input: Tensor, output_size: Optional[List[int]] = None,
                     scale_factors: Optional[List[float]] = None):
    """``aten::upsample_nearest{1,2,3}d.vec``."""
    if output_size is not None:
        return F.interpolate(input, size=output_size, mode="nearest")
    return F.interpolate(input, scale_factor=scale_factors, mode="nearest")


def upsample_linear(input: Tensor, output_size: Optional[List[int]], align_corners: bool,
                    scale_factors: Optional[List[float]] = None):
    """``aten::upsample_{linear1d,bilinear2d,trilinear3d}.vec``."""
    mode = ("linear", "bilinear", "trilinear")[input.dim() - 3]
    if output_size is not None:
        return F.interpolate(input, size=output_size, mode=mode, align_corners=align_corners)
    return F.interpolate(input, scale_factor=scale_factors, mode=mode,
                         align_corners=align_corners)


COMPOSITES = {
    "_native_multi_head_attention": native_multi_head_attention,
    "_transformer_encoder_layer_fwd": transformer_encoder_layer_fwd,
    "upsample_nearest1d": upsample_nearest, "upsample_nearest2d": upsample_nearest,
    "upsample_nearest3d": upsample_nearest, "upsample_linear1d": upsample_linear,
    "upsample_bilinear2d": upsample_linear, "upsample_trilinear3d": upsample_linear,
}
