"""PyTorch Geometric, run by tests/as_torch/test_torch_geometric.py with the real torch and
under ``python -m ptcore.as_torch``: its pure-Python message passing (no torch_scatter or
torch_sparse), on small random graphs from NumPy: convolution layers forward and backward,
global pooling over a batch of graphs, graph utilities, a node-classification training run
and a mini-batched graph-classification step.  Weights come from NumPy, so both runs compute
on the same numbers; each case writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

import torch_geometric
from case_results import main
from torch_geometric import nn as gnn
from torch_geometric import utils
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader

warnings.filterwarnings("ignore")


def _fill(module, seed):
    """``module`` with every parameter drawn from NumPy (scaled by its fan-in)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():
            fan_in = p.shape[-1] if p.dim() > 1 else 1
            p.copy_(torch.from_numpy((rng.standard_normal(p.shape) / np.sqrt(fan_in))
                                     .astype(np.float32)))
    return module


def _graph(seed, n=30, e=90, f=8, classes=3):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, e), rng.integers(0, n, e)
    keep = src != dst
    edge_index = utils.to_undirected(torch.from_numpy(np.stack([src[keep], dst[keep]])))
    x = torch.from_numpy(rng.standard_normal((n, f)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, classes, n))
    edge_attr = torch.from_numpy(rng.random((edge_index.shape[1], 1), dtype=np.float32))
    return Data(x=x, edge_index=edge_index, y=y, edge_weight=edge_attr[:, 0],
                edge_attr=edge_attr)


def layers_case():
    data = _graph(0)
    x = data.x.clone().requires_grad_(True)
    ei, ew = data.edge_index, data.edge_weight
    convs = {"gcn": (gnn.GCNConv(8, 6), (ei, ew)),
             "gcn_improved": (gnn.GCNConv(8, 6, improved=True), (ei,)),
             "gat": (gnn.GATConv(8, 3, heads=2), (ei,)),
             "gatv2": (gnn.GATv2Conv(8, 3, heads=2, edge_dim=1), (ei, data.edge_attr)),
             "sage_mean": (gnn.SAGEConv(8, 6), (ei,)),
             "sage_max": (gnn.SAGEConv(8, 6, aggr="max"), (ei,)),
             "gin": (gnn.GINConv(torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(),
                                                     torch.nn.Linear(6, 6))), (ei,)),
             "graph": (gnn.GraphConv(8, 6, aggr="add"), (ei, ew)),
             "cheb": (gnn.ChebConv(8, 6, K=3), (ei, ew)),
             "transformer": (gnn.TransformerConv(8, 3, heads=2), (ei,)),
             "edge": (gnn.EdgeConv(torch.nn.Linear(16, 6), aggr="max"), (ei,)),
             "sg": (gnn.SGConv(8, 6, K=2), (ei,)),
             "tag": (gnn.TAGConv(8, 6, K=2), (ei, ew)),
             "gen": (gnn.GENConv(8, 6, aggr="softmax", t=1.0, learn_t=True), (ei,))}
    res = {}
    for i, (name, (conv, args)) in enumerate(convs.items()):
        _fill(conv, 100 + i)
        out = conv(x, *args)
        w = torch.from_numpy(np.random.default_rng(200 + i).standard_normal(tuple(out.shape))
                             .astype(np.float32))
        (out * w).sum().backward()
        res[name] = out
        res[name + "_xgrad"] = x.grad.clone()
        res[name + "_pgrad"] = [p.grad for p in conv.parameters() if p.grad is not None]
        x.grad = None
    att = gnn.GATConv(8, 3, heads=2)
    _fill(att, 300)
    _, (att_ei, alpha) = att(data.x, ei, return_attention_weights=True)
    res["gat_attention_index"] = att_ei
    res["gat_attention"] = alpha
    return res


def pooling_case():
    graphs = [_graph(s, n=8 + s, e=20) for s in range(4)]
    batch = Batch.from_data_list(graphs)
    x, b = batch.x, batch.batch
    res = {"batch": b, "ptr": batch.ptr, "edge_index": batch.edge_index,
           "mean": gnn.global_mean_pool(x, b), "max": gnn.global_max_pool(x, b),
           "add": gnn.global_add_pool(x, b),
           "att": _fill(gnn.AttentionalAggregation(torch.nn.Linear(8, 1)), 5)(x, b),
           "set2set": _fill(gnn.Set2Set(8, processing_steps=2), 6)(x, b),
           "sort": gnn.aggr.SortAggregation(k=3)(x, b)}
    topk = _fill(gnn.TopKPooling(8, ratio=0.5), 7)
    px, pei, _, pb, perm, score = topk(x, batch.edge_index, batch=b)
    res.update(topk_x=px, topk_edge_index=pei, topk_batch=pb, topk_perm=perm,
               topk_score=score)
    sag = _fill(gnn.SAGPooling(8, ratio=0.5), 8)
    res["sag_x"] = sag(x, batch.edge_index, batch=b)[0]
    dense_x, mask = utils.to_dense_batch(x, b)
    res.update(dense_x=dense_x, dense_mask=mask,
               dense_adj=utils.to_dense_adj(batch.edge_index, b))
    return res


def utils_case():
    data = _graph(1)
    ei = data.edge_index
    loops, w = utils.add_self_loops(ei, data.edge_weight, fill_value=2.0, num_nodes=30)
    sub_ei, sub_attr = utils.subgraph(torch.arange(0, 30, 2), ei, data.edge_attr,
                                      relabel_nodes=True)
    src = torch.from_numpy(np.random.default_rng(2).standard_normal((ei.shape[1], 4))
                           .astype(np.float32))
    return {"self_loops": loops, "self_loop_weight": w,
            "remove_self_loops": utils.remove_self_loops(loops)[0],
            "degree": utils.degree(ei[0], 30), "in_degree": utils.degree(ei[1], 30),
            "softmax": utils.softmax(src, ei[1], num_nodes=30),
            "scatter_sum": utils.scatter(src, ei[1], 0, dim_size=30, reduce="sum"),
            "scatter_mean": utils.scatter(src, ei[1], 0, dim_size=30, reduce="mean"),
            "scatter_max": utils.scatter(src, ei[1], 0, dim_size=30, reduce="max"),
            "scatter_min": utils.scatter(src, ei[1], 0, dim_size=30, reduce="min"),
            "coalesce": utils.coalesce(torch.cat([ei, ei.flip(0)], 1)),
            "subgraph": sub_ei, "subgraph_attr": sub_attr,
            "k_hop": utils.k_hop_subgraph(3, 2, ei, relabel_nodes=True, num_nodes=30)[0],
            "is_undirected": utils.is_undirected(ei),
            "laplacian": utils.get_laplacian(ei, data.edge_weight, "sym")[1],
            "dense_adj": utils.to_dense_adj(ei, max_num_nodes=30),
            "dense_to_sparse": utils.dense_to_sparse(utils.to_dense_adj(ei)[0])[0],
            "homophily": utils.homophily(ei, data.y),
            "one_hot": utils.one_hot(data.y, 3), "contains_self_loops":
            utils.contains_self_loops(loops)}


class _GCN(torch.nn.Module):
    def __init__(self, f, hidden, classes):
        super().__init__()
        self.conv1 = gnn.GCNConv(f, hidden)
        self.conv2 = gnn.GCNConv(hidden, classes)

    def forward(self, x, edge_index):
        h = torch.relu(self.conv1(x, edge_index))
        return self.conv2(h, edge_index)


def node_classification_case():
    """A 2-layer GCN on one graph with train/test masks: 20 Adam steps (weight decay)."""
    data = _graph(3, n=60, e=240, f=8, classes=3)
    mask = torch.from_numpy(np.random.default_rng(4).random(60) < 0.6)
    model = _fill(_GCN(8, 16, 3), 9)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    for _ in range(20):
        model.train()
        opt.zero_grad()
        out = model(data.x, data.edge_index)
        loss = torch.nn.functional.cross_entropy(out[mask], data.y[mask])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        pred = model(data.x, data.edge_index).argmax(-1)
    return {"losses": losses, "test_acc": (pred[~mask] == data.y[~mask]).float().mean(),
            "weights": {k: v for k, v in model.state_dict().items()}}


def graph_classification_case():
    """GIN with batch norm over mini-batches (a DataLoader of Data, no shuffling), mean
    pooling, two epochs of SGD with momentum."""
    graphs = []
    for s in range(12):
        g = _graph(10 + s, n=6 + s % 5, e=14, f=8)
        g.y = torch.tensor([s % 2])
        graphs.append(g)
    loader = DataLoader(graphs, batch_size=4, shuffle=False)

    class GIN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = gnn.GINConv(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                                      torch.nn.Linear(16, 16)), train_eps=True)
            self.c2 = gnn.GINConv(torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(),
                                                      torch.nn.Linear(16, 16)))
            self.norm = gnn.BatchNorm(16)
            self.head = torch.nn.Linear(16, 2)

        def forward(self, x, ei, b):
            h = self.norm(torch.relu(self.c1(x, ei)))
            h = torch.relu(self.c2(h, ei))
            return self.head(gnn.global_mean_pool(h, b))

    model = _fill(GIN(), 11)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(2):
        for batch in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(batch.x, batch.edge_index,
                                                           batch.batch), batch.y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return {"losses": losses, "weights": dict(model.state_dict())}


def hetero_models_case():
    """A heterogeneous graph (``HeteroData``, ``ToUndirected``) through ``HeteroConv`` of GAT
    and GraphSAGE layers with lazy input sizes, and through a model made heterogeneous by
    ``to_hetero`` (PyG's fx tracer), forward and backward; transforms on a homogeneous graph;
    PyG's GAT and GraphSAGE (jumping knowledge) models."""
    from torch_geometric import transforms as T
    from torch_geometric.data import HeteroData
    rng = np.random.default_rng(5)
    d = HeteroData()
    d["paper"].x = torch.from_numpy(rng.standard_normal((10, 8)).astype(np.float32))
    d["author"].x = torch.from_numpy(rng.standard_normal((6, 5)).astype(np.float32))
    d["author", "writes", "paper"].edge_index = torch.from_numpy(
        np.stack([rng.integers(0, 6, 20), rng.integers(0, 10, 20)]))
    d["paper", "cites", "paper"].edge_index = torch.from_numpy(
        np.stack([rng.integers(0, 10, 15), rng.integers(0, 10, 15)]))
    d = T.ToUndirected()(d)
    conv = gnn.HeteroConv({
        ("author", "writes", "paper"): gnn.GATConv((-1, -1), 4, add_self_loops=False),
        ("paper", "rev_writes", "author"): gnn.SAGEConv((-1, -1), 4),
        ("paper", "cites", "paper"): gnn.GCNConv(-1, 4)}, aggr="sum")
    conv(d.x_dict, d.edge_index_dict)           # (materialises the lazy sizes)
    _fill(conv, 12)
    out = conv(d.x_dict, d.edge_index_dict)
    sum(v.square().sum() for v in out.values()).backward()
    res = {"edge_types": [" ".join(et) for et in d.edge_types],
           "hetero_out": dict(out),
           "hetero_grads": [p.grad for p in conv.parameters() if p.grad is not None]}
    g = _graph(6)
    g2 = T.Compose([T.NormalizeFeatures(), T.GCNNorm(), T.AddSelfLoops("edge_weight")])(
        g.clone())
    res.update(normalized_x=g2.x, gcn_norm_index=g2.edge_index,
               gcn_norm_weight=g2.edge_weight)
    # to_hetero: the homogeneous model traced (PyG's own fx tracer) and rewritten per type
    class GNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = gnn.SAGEConv((-1, -1), 8)
            self.c2 = gnn.SAGEConv((-1, -1), 4)

        def forward(self, x, edge_index):
            return self.c2(self.c1(x, edge_index).relu(), edge_index)
    hetero = gnn.to_hetero(GNN(), d.metadata(), aggr="sum")
    hetero(d.x_dict, d.edge_index_dict)
    _fill(hetero, 15)
    out = hetero(d.x_dict, d.edge_index_dict)
    sum(v.sum() for v in out.values()).backward()
    res["to_hetero_out"] = dict(out)
    res["to_hetero_grads"] = {n: p.grad for n, p in hetero.named_parameters()}
    res["gat_model"] = _fill(gnn.models.GAT(8, 16, 2, 3, heads=2), 13)(g.x, g.edge_index)
    res["sage_jk_model"] = _fill(gnn.models.GraphSAGE(8, 16, 2, 3, jk="cat"), 14)(
        g.x, g.edge_index)
    return res


def edge_index_case():
    """PyG's ``EdgeIndex``, a wrapper subclass (``Tensor._make_wrapper_subclass`` with
    ``__torch_dispatch__``): validation, sorting, CSR/CSC pointers, dense and sparse-dense
    products (sum and mean), indexing and concatenation, and GCN/GraphSAGE/GAT layers taking
    it, forward and backward."""
    data = _graph(3)
    ei = torch_geometric.EdgeIndex(data.edge_index, sparse_size=(30, 30)).validate()
    s, perm = ei.sort_by("row")
    (rowptr, col), _ = s.get_csr()
    (colptr, row), _ = s.get_csc()
    x = data.x.clone().requires_grad_(True)
    res = {"sorted": s.as_tensor(), "perm": perm, "rowptr": rowptr, "col": col,
           "colptr": colptr, "row": row, "is_sorted": s.is_sorted_by_row,
           "dense": s.to_dense(), "spmm_sum": s.matmul(data.x),
           "spmm_mean": s.matmul(data.x, reduce="mean"),
           "slice": s[:, :7].as_tensor(), "flip": s.flip(0).as_tensor(),
           "cat": torch.cat([s, s], dim=1).as_tensor(), "repr": repr(s)}
    outs = []
    for k, conv in enumerate((gnn.GCNConv(8, 5), gnn.SAGEConv(8, 5), gnn.GATConv(8, 5))):
        outs.append(_fill(conv, 20 + k)(x, s))
    res.update(gcn=outs[0], sage=outs[1], gat=outs[2])
    sum(o.square().sum() for o in outs).backward()
    res["x_grad"] = x.grad
    return res


def sparse_adjacency_case():
    """GCNConv and SAGEConv given the (transposed) adjacency as a ``torch.sparse_coo_tensor``
    and as its CSR form, forward and backward: PyG takes the sparse path only for what
    ``is_torch_sparse_tensor`` (``isinstance(src, Tensor)`` and a sparse layout) accepts."""
    data = _graph(3)
    n = data.num_nodes
    # (coalesced: PyG's to_edge_index marks a COO tensor coalesced in place, and torch's
    # to_sparse_csr then trusts the flag; the COO indices must really be sorted)
    adj_t = torch.sparse_coo_tensor(data.edge_index.flip(0), data.edge_weight, (n, n)).coalesce()
    res = {"is_sparse_tensor": [utils.is_torch_sparse_tensor(adj_t),
                                utils.is_torch_sparse_tensor(adj_t.to_sparse_csr()),
                                isinstance(adj_t, torch.Tensor), torch.is_tensor(adj_t),
                                utils.is_sparse(adj_t)],
           "spmm": utils.spmm(adj_t, data.x), "spmm_csr": utils.spmm(adj_t.to_sparse_csr(),
                                                                     data.x, reduce="sum")}
    for layout, adj in (("coo", adj_t), ("csr", adj_t.to_sparse_csr())):
        x = data.x.clone().requires_grad_(True)
        for k, conv in enumerate((gnn.GCNConv(8, 5), gnn.SAGEConv(8, 5))):
            _fill(conv, 40 + k)
            out = conv(x, adj)
            w = torch.from_numpy(np.random.default_rng(60 + k).standard_normal(tuple(out.shape))
                                 .astype(np.float32))
            (out * w).sum().backward()
            name = f"{type(conv).__name__}_{layout}"
            res[name] = out
            res[name + "_pgrad"] = [p.grad for p in conv.parameters()]
        res[f"x_grad_{layout}"] = x.grad
    return res


CASES = {"layers": layers_case, "pooling": pooling_case, "utils": utils_case,
         "node_classification": node_classification_case,
         "graph_classification": graph_classification_case, "hetero_models": hetero_models_case,
         "edge_index": edge_index_case, "sparse_adjacency": sparse_adjacency_case}

if __name__ == "__main__":
    print(torch_geometric.__version__, file=sys.stderr)
    main(CASES, sys.argv)
