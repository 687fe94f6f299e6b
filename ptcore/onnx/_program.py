"""``ONNXProgram``: what ``ptcore.onnx.export`` returns (``torch.onnx.ONNXProgram``
of torch's default, ``dynamo=True``, exporter): the exported model, to
``save``, inspect as ``model_proto`` (an ``onnx.ModelProto``, with the
``onnx`` package) or run -- called like the model, through ONNX Runtime."""
import os

__all__ = ["ONNXProgram"]


class ONNXProgram:
    """An exported ONNX model (the serialized ``ModelProto``)."""

    def __init__(self, data, exported_program=None):
        self._data = bytes(data)
        self.exported_program = exported_program
        self._session = None

    @property
    def model_proto(self):
        """The model as an ``onnx.ModelProto`` (needs the ``onnx`` package)."""
        import onnx
        return onnx.load_from_string(self._data)

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        """Write the model to ``destination`` (a path or a binary file object)."""
        data = self._data
        if not include_initializers or keep_initializers_as_inputs:
            import onnx
            m = onnx.load_from_string(data)
            if keep_initializers_as_inputs:
                have = {i.name for i in m.graph.input}
                for t in m.graph.initializer:
                    if t.name not in have:
                        m.graph.input.append(onnx.helper.make_tensor_value_info(
                            t.name, t.data_type, list(t.dims)))
            if not include_initializers:
                del m.graph.initializer[:]
            data = m.SerializeToString()
        if isinstance(destination, (str, os.PathLike)):
            with open(destination, "wb") as fh:
                fh.write(data)
        else:
            destination.write(data)

    def optimize(self):
        """Optimize the graph in place: the exporter already folded the
        constants and dropped dead nodes, so there is nothing left to do."""
        return None

    def initialize_inference_session(self, initializer=None):
        """Create the ONNX Runtime session ``__call__`` runs (``initializer(model_bytes)``
        makes it; by default a CPU session)."""
        if initializer is None:
            import onnxruntime as ort

            def initializer(model):
                return ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        self._session = initializer(self._data)

    def release(self):
        """Drop the inference session."""
        self._session = None

    def __call__(self, *args, **kwargs):
        """Run the model in ONNX Runtime on ``args`` (tensors, in the order of
        the model's inputs; keyword arguments after them); a tuple of tensors."""
        import numpy as np
        import ptcore
        if self._session is None:
            self.initialize_inference_session()
        flat = []

        def walk(x):
            if isinstance(x, (list, tuple)):
                for y in x:
                    walk(y)
            elif x is not None:
                flat.append(x)
        walk(list(args) + list(kwargs.values()))
        names = [i.name for i in self._session.get_inputs()]
        feed = {n: (v.detach().cpu().numpy() if isinstance(v, ptcore.Tensor) else np.asarray(v))
                for n, v in zip(names, flat)}
        return tuple(ptcore.from_numpy(np.ascontiguousarray(o))
                     for o in self._session.run(None, feed))

    def __repr__(self):
        try:
            m = self.model_proto
            return (f"ONNXProgram(inputs={[i.name for i in m.graph.input]}, "
                    f"outputs={[o.name for o in m.graph.output]}, "
                    f"nodes={len(m.graph.node)})")
        except ImportError:
            return f"ONNXProgram({len(self._data)} bytes)"
