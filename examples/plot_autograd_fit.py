"""
Fitting a curve with autograd
=============================

A damped oscillation ``a * exp(-b t) * cos(w t + p)`` is fitted to noisy
samples by gradient descent: ptcore's autograd computes the gradient of the
mean squared error with respect to the four parameters, and ``optim.Adam``
updates them.  The figure shows the data, the fit, and the loss per step.
"""
import matplotlib.pyplot as plt

import ptcore

ptcore.manual_seed(0)
t = ptcore.linspace(0, 6, 200)
truth = 1.5 * ptcore.exp(-0.4 * t) * ptcore.cos(3.0 * t + 0.3)
y = truth + 0.05 * ptcore.randn(t.shape)

# %%
# The parameters are leaf tensors that require grad; each step evaluates the
# model, calls ``backward()`` on the loss and lets the optimizer step.
params = ptcore.tensor([1.0, 0.1, 2.8, 0.0], requires_grad=True)
opt = ptcore.optim.Adam([params], lr=0.05)
losses = []
for step in range(400):
    a, b, w, p = params
    pred = a * ptcore.exp(-b * t) * ptcore.cos(w * t + p)
    loss = ((pred - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

print("fitted a, b, w, p:", [round(v, 3) for v in params.tolist()])
print("final loss:", round(losses[-1], 5))

# %%
# Tensors convert to NumPy without a copy (``.numpy()`` on a detached
# tensor), so matplotlib plots them directly.
with ptcore.no_grad():
    a, b, w, p = params
    fit = a * ptcore.exp(-b * t) * ptcore.cos(w * t + p)
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.2))
ax0.plot(t.numpy(), y.numpy(), ".", ms=3, label="data")
ax0.plot(t.numpy(), fit.numpy(), label="fit")
ax0.set_xlabel("t")
ax0.legend()
ax1.semilogy(losses)
ax1.set_xlabel("step")
ax1.set_ylabel("MSE")
fig.tight_layout()
plt.show()
