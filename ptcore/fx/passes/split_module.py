"""``split_module`` (``torch.fx.passes.split_module``): cut a traced module into
one submodule per partition that a callback assigns each node to; the parent
calls the submodules in a dependency order and passes values between them."""
import inspect

from ptcore.fx.graph import Graph
from ptcore.fx.node import map_arg
from ptcore.fx.graph_module import GraphModule
from ptcore.fx.proxy import Proxy
from ptcore.nn import Module

__all__ = ["Partition", "split_module"]


class Partition:
    """The nodes of one partition, the values it reads from outside
    (``inputs``) and hands out (``outputs``), the partitions it depends on and
    the ones depending on it, and the graph being built for it."""

    def __init__(self, name):
        self.name = name
        self.submod_name = f"submod_{name}"
        self.node_names = []
        self.inputs = {}
        self.outputs = {}
        self.dependencies = {}
        self.dependents = {}
        self.graph = Graph()
        self.environment = {}
        self.targets = {}

    def __repr__(self):
        return (f"name: {self.name},\n"
                f" nodes: {self.node_names},\n"
                f" inputs: {self.inputs},\n"
                f" outputs: {self.outputs},\n"
                f" partitions depended on: {self.dependencies},\n"
                f" partition dependents: {self.dependents}")


def _get_attr_from_qualname(mod, qualname):
    attr_val = mod
    for atom in qualname.split("."):
        if not hasattr(attr_val, atom):
            raise AttributeError(f"Node target {qualname} not found!")
        attr_val = getattr(attr_val, atom)
    return attr_val


def split_module(m, root_m, split_callback, qualname_map=None, keep_original_order=False,
                 keep_original_node_name=False, keep_original_input_name=True, *,
                 partition_affix=None, tuple_return=False):
    """A GraphModule calling one submodule ``submod_<k>`` per partition ``k``
    that ``split_callback(node)`` gives the nodes of ``m``'s graph (a
    GraphModule), computing what ``m`` computes.  ``root_m`` is unused (as in
    torch).  ``qualname_map`` (a dict) receives the new targets' original
    names; ``keep_original_order`` builds the parent in the partitions' first
    appearance instead of a dependency order; ``keep_original_node_name`` /
    ``keep_original_input_name`` keep the node / input names inside the
    submodules; ``partition_affix`` names them ``submod_<affix>_<k>``;
    ``tuple_return`` makes every submodule return a tuple."""
    partitions = {}
    orig_nodes = {}

    def record_cross_partition_use(def_node, use_node):
        defined = getattr(def_node, "_fx_partition", None)
        used = getattr(use_node, "_fx_partition", None)
        if defined != used:
            if defined is not None:
                def_partition = partitions[defined]
                def_partition.outputs.setdefault(def_node.name)
                if used is not None:
                    def_partition.dependents.setdefault(used)
            if used is not None:
                use_partition = partitions[used]
                use_partition.inputs.setdefault(def_node.name)
                if defined is not None:
                    use_partition.dependencies.setdefault(defined)

    for node in m.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        name = str(split_callback(node))
        if partition_affix is not None:
            name = "_".join([partition_affix, name])
        partition = partitions.get(name)
        if partition is None:
            partitions[name] = partition = Partition(name)
        partition.node_names.append(node.name)
        node._fx_partition = name

    for node in m.graph.nodes:
        orig_nodes[node.name] = node
        if node.op in ("placeholder", "get_attr"):
            continue
        if node.op == "output":
            map_arg(node.args[0], lambda n: record_cross_partition_use(n, None))
            continue
        map_arg(node.args, lambda d: record_cross_partition_use(d, node))
        map_arg(node.kwargs, lambda d: record_cross_partition_use(d, node))

    original_partition_order = list(partitions)
    root_partitions = [n for n, p in partitions.items() if not p.dependencies]
    sorted_partitions = []
    while root_partitions:
        root = root_partitions.pop()
        sorted_partitions.append(root)
        for dependent in partitions[root].dependents:
            partitions[dependent].dependencies.pop(root)
            if not partitions[dependent].dependencies:
                root_partitions.append(dependent)
    if len(sorted_partitions) != len(partitions):
        raise RuntimeError("cycle exists between partitions!")

    # the submodules' inputs: placeholders (modules read by get_attr stay attributes)
    for partition_name in sorted_partitions:
        partition = partitions[partition_name]
        new_inputs = {}
        counter = 0
        placeholder_inputs, get_attr_inputs = [], []
        for inp in partition.inputs:
            orig = orig_nodes[inp]
            if orig.op == "get_attr" and isinstance(orig.target, str) and \
                    isinstance(_get_attr_from_qualname(m, orig.target), Module):
                get_attr_inputs.append(inp)
            else:
                placeholder_inputs.append(inp)
        for inp in placeholder_inputs + get_attr_inputs:
            orig = orig_nodes[inp]
            attr = _get_attr_from_qualname(m, orig.target) if orig.op == "get_attr" else None
            if isinstance(attr, Module):
                placeholder = partition.graph.get_attr(orig.target)
                partition.targets[orig.target] = attr
            else:
                if keep_original_input_name:
                    name = inp
                else:
                    name = f"arg_{counter}"
                    counter += 1
                placeholder = partition.graph.placeholder(name, type_expr=orig.type)
                new_inputs[inp] = None
            placeholder.meta = orig.meta.copy()
            partition.environment[orig] = placeholder
        partition.inputs = new_inputs

    # the partitions' nodes
    for node in m.graph.nodes:
        if not hasattr(node, "_fx_partition"):
            continue
        partition = partitions[node._fx_partition]
        env = partition.environment
        args = map_arg(node.args, lambda n: env[n])
        kwargs = map_arg(node.kwargs, lambda n: env[n])
        if node.op not in ("call_module", "get_attr"):
            target = node.target
        else:
            target_attr = _get_attr_from_qualname(m, node.target)
            target = node.target.replace(".", "_")
            partition.targets[target] = target_attr
            if qualname_map is not None:
                qualname_map[f"{partition.submod_name}.{target}"] = node.target
        new_node = partition.graph.create_node(
            op=node.op, target=target, args=args, kwargs=kwargs, type_expr=node.type,
            name=node.name if keep_original_node_name else None)
        new_node.meta = node.meta.copy()
        partition.environment[node] = new_node

    base_env = {}
    base_graph = Graph()
    base_attrs = {}

    def construct_graph(node):
        if node.op == "placeholder":
            default = node.args[0] if len(node.args) > 0 else inspect.Signature.empty
            if keep_original_node_name:
                args = () if default is inspect.Signature.empty else (default,)
                base_env[node.name] = base_graph.create_node(
                    "placeholder", node.name, args=args, type_expr=node.type)
            else:
                base_env[node.name] = base_graph.placeholder(
                    node.target, type_expr=node.type, default_value=default)
            base_env[node.name].meta = node.meta.copy()
        elif node.op == "get_attr":
            base_env[node.name] = base_graph.get_attr(node.target)
            base_env[node.name].meta = node.meta.copy()
            base_attrs[node.target] = _get_attr_from_qualname(m, node.target)

    orig_env = {}
    if not keep_original_order:
        for node in m.graph.nodes:
            construct_graph(node)
    else:
        for node in m.graph.nodes:
            orig_env[node.name] = node
    order = sorted_partitions if not keep_original_order else original_partition_order
    constructed = set()
    original_order = [n for n in m.graph.nodes if n.op == "placeholder"]
    for partition_name in order:
        partition = partitions[partition_name]
        output_vals = tuple(partition.environment[orig_nodes[n]] for n in partition.outputs)
        if len(output_vals) == 1 and not tuple_return:
            partition.graph.output(output_vals[0])
        else:
            partition.graph.output(output_vals)
        if keep_original_order:
            attr_nodes = [orig_env[k] for k in partition.inputs if k not in original_order]
            for node in original_order + attr_nodes:
                if node not in constructed:
                    construct_graph(node)
                    constructed.add(node)
        base_attrs[partition.submod_name] = GraphModule(partition.targets, partition.graph)
        output_val = base_graph.call_module(
            partition.submod_name, tuple(base_env[n] for n in partition.inputs))
        num_outputs = len(partition.outputs)
        if num_outputs > 1 or (num_outputs == 1 and tuple_return):
            proxy = Proxy(output_val)
            for i, output_name in enumerate(partition.outputs):
                base_env[output_name] = proxy[i].node
        elif num_outputs == 1:
            base_env[next(iter(partition.outputs))] = output_val
    if keep_original_order and not base_env:
        for node in m.graph.nodes:
            construct_graph(node)
    for node in m.graph.nodes:
        if node.op == "output":
            base_graph.output(map_arg(node.args[0], lambda n: base_env[n.name]))
    ret = GraphModule(base_attrs, base_graph)
    ret.meta["partition_names"] = {p.submod_name for p in partitions.values()}
    return ret
