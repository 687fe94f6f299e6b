"""
Learning-rate schedules
=======================

The schedulers of ``ptcore.optim.lr_scheduler`` follow PyTorch's, step for
step.  Each one drives an SGD optimizer over 100 steps here; the figure shows
the learning rate it sets.
"""
import matplotlib.pyplot as plt

import ptcore
from ptcore.optim import lr_scheduler as S


def trace(make_scheduler, steps=100):
    """The learning rate at each step under the scheduler ``make_scheduler(opt)`` makes."""
    p = ptcore.zeros(1, requires_grad=True)
    opt = ptcore.optim.SGD([p], lr=0.1, momentum=0.9)
    sched = make_scheduler(opt)
    lrs = []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


schedules = {
    "StepLR(step_size=30, gamma=0.5)": lambda o: S.StepLR(o, step_size=30, gamma=0.5),
    "CosineAnnealingLR(T_max=100)": lambda o: S.CosineAnnealingLR(o, T_max=100),
    "OneCycleLR(max_lr=0.1)": lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=100),
    "CyclicLR(0.01, 0.1, step_size_up=20)":
        lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=20),
}

fig, ax = plt.subplots(figsize=(7, 3.5))
for label, make in schedules.items():
    ax.plot(trace(make), label=label)
ax.set_xlabel("step")
ax.set_ylabel("learning rate")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
