"""Programs in the style of the pytorch/examples repository, each written once against the
module it is given and run under torch and under ptcore (only ``import torch`` changed)
from the same initial weights and the same NumPy-generated data: VAE, word language model
(tied LSTM, GRU, RNN_TANH, TransformerModel with a causal mask), REINFORCE and
actor-critic, super-resolution (PixelShuffle, orthogonal_ init), fast neural style
(ReflectionPad2d, InstanceNorm2d, nearest upsampling, Gram matrices), a siamese network,
time-sequence prediction (LSTMCell in float64 with LBFGS), forward-forward, GCN (sparse
adjacency), a vision transformer, the imagenet loop (ResNet, top-k accuracy, checkpoint
resume), polynomial regression, an MNIST RNN, and lr schedulers inside a training loop.

Losses, metrics, outputs and final state dicts must agree to float32 tolerance (float64
where the program is double).  Random draws that torch and ptcore make differently
(dropout masks, sampling, shuffling) are replaced by NumPy draws or switched off."""
import io
import math
import re
from collections import deque, namedtuple

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import assert_close, one_thread, run_pair  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


def vae(torch, init, steps=3):
    nn = torch.nn; F = torch.nn.functional
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    rng = np.random.RandomState(0)
    class VAE(nn.Module):
        def __init__(self):
            super(VAE, self).__init__()
            self.fc1 = nn.Linear(64, 32); self.fc21 = nn.Linear(32, 8); self.fc22 = nn.Linear(32, 8)
            self.fc3 = nn.Linear(8, 32); self.fc4 = nn.Linear(32, 64)
        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)
        def reparameterize(self, mu, logvar):
            std = torch.exp(0.5 * logvar)
            eps = torch.from_numpy(rng.standard_normal(tuple(std.shape)).astype(np.float32))
            assert torch.randn_like(std).shape == std.shape
            return mu + eps * std
        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))
        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 64))
            z = self.reparameterize(mu, logvar)
            return self.decode(z), mu, logvar
    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction='sum')
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD
    data = np.random.RandomState(1).rand(40, 1, 8, 8).astype(np.float32)
    ds = TensorDataset(torch.from_numpy(data), torch.zeros(40, dtype=torch.long))
    train_loader = DataLoader(ds, batch_size=16, shuffle=False)
    model = VAE(); init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    out = []
    for epoch in range(steps):
        model.train(); train_loss = 0
        for batch_idx, (d, _) in enumerate(train_loader):
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(d)
            loss = loss_function(recon_batch, d, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
        out.append(train_loss / len(train_loader.dataset))
        model.eval(); test_loss = 0
        with torch.no_grad():
            for i, (d, _) in enumerate(train_loader):
                recon_batch, mu, logvar = model(d)
                test_loss += loss_function(recon_batch, d, mu, logvar).item()
                if i == 0:
                    n = min(d.size(0), 8)
                    comparison = torch.cat([d[:n], recon_batch.view(16, 1, 8, 8)[:n]])
        out.append(test_loss / len(train_loader.dataset))
        out.append(comparison)
        with torch.no_grad():
            sample = torch.from_numpy(rng.standard_normal((4, 8)).astype(np.float32))
            out.append(model.decode(sample).cpu().view(4, 1, 8, 8))
    return out


def _rnn_model(torch):
    nn = torch.nn; F = torch.nn.functional
    class RNNModel(nn.Module):
        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ['LSTM', 'GRU']:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                if nhid != ninp:
                    raise ValueError('When using the tied flag, nhid must be equal to emsize')
                self.decoder.weight = self.encoder.weight
            self.init_weights()
            self.rnn_type = rnn_type; self.nhid = nhid; self.nlayers = nlayers
        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)
        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden
        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == 'LSTM':
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            else:
                return weight.new_zeros(self.nlayers, bsz, self.nhid)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer('pe', pe)
        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                                   num_encoder_layers=nlayers, num_decoder_layers=1,
                                                   dropout=dropout)
            self.model_type = 'Transformer'
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout, max_len=64)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            self.init_weights()
        def _generate_square_subsequent_mask(self, sz):
            return torch.log(torch.tril(torch.ones(sz, sz)))
        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)
        def forward(self, src, has_mask=True):
            if has_mask:
                device = src.device
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    mask = self._generate_square_subsequent_mask(len(src)).to(device)
                    self.src_mask = mask
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return F.log_softmax(output, dim=-1)
    return RNNModel, TransformerModel


def word_lm(torch, init, model_type="LSTM", tied=True, epochs=2):
    nn = torch.nn
    RNNModel, TransformerModel = _rnn_model(torch)
    ntokens, bptt, clip, bs = 23, 7, 0.25, 4
    corpus = np.random.RandomState(2).randint(0, ntokens, size=150)
    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        data = data.view(bsz, -1).t().contiguous()
        return data.to(torch.device("cpu"))
    train_data = batchify(torch.tensor(corpus[:110], dtype=torch.long), bs)
    val_data = batchify(torch.from_numpy(corpus[110:]), 2)
    if model_type == 'Transformer':
        model = TransformerModel(ntokens, 16, 2, 32, 2, 0.0)
    else:
        model = RNNModel(model_type, ntokens, 16, 16, 2, 0.0, tied)
    init(model)
    criterion = nn.NLLLoss()
    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(repackage_hidden(v) for v in h)
    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i+seq_len]
        target = source[i+1:i+1+seq_len].view(-1)
        return data, target
    def evaluate(data_source):
        model.eval()
        total_loss = 0.
        if model_type != 'Transformer':
            hidden = model.init_hidden(2)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                if model_type == 'Transformer':
                    output = model(data)
                    output = output.view(-1, ntokens)
                else:
                    output, hidden = model(data, hidden)
                    hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)
    lr = 5.0
    out = []
    best_val_loss = None
    for epoch in range(epochs):
        model.train()
        total_loss = 0.
        if model_type != 'Transformer':
            hidden = model.init_hidden(bs)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            if model_type == 'Transformer':
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
            out.append(loss.item())
        val_loss = evaluate(val_data)
        out.append(val_loss); out.append(math.exp(val_loss))
        if not best_val_loss or val_loss < best_val_loss:
            buf = io.BytesIO()
            torch.save(model.state_dict(), buf)
            best_val_loss = val_loss
        else:
            lr /= 4.0
    buf.seek(0)
    model.load_state_dict(torch.load(buf))
    if model_type in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
        model.rnn.flatten_parameters()
    out.append(evaluate(val_data))
    # generate.py with greedy choice in place of multinomial sampling
    model.eval()
    input = torch.tensor([[3]], dtype=torch.long)
    words = []
    if model_type != 'Transformer':
        hidden = model.init_hidden(1)
    with torch.no_grad():
        for i in range(5):
            if model_type == 'Transformer':
                output = model(input, False)
                word_weights = output[-1].squeeze().div(0.7).exp().cpu()
                word_idx = torch.argmax(word_weights)
                word_tensor = torch.Tensor([[word_idx]]).long()
                input = torch.cat([input, word_tensor], 0)
            else:
                output, hidden = model(input, hidden)
                word_weights = output.squeeze().div(0.7).exp().cpu()
                word_idx = torch.argmax(word_weights)
                input.fill_(word_idx)
            words.append(int(word_idx))
    out.append(words)
    return out


def _cartpole(seed):
    rng = np.random.RandomState(seed)
    class Env:
        def reset(self):
            self.s = rng.uniform(-0.05, 0.05, size=4); self.t = 0
            return self.s.copy(), {}
        def step(self, a):
            x, xd, th, thd = self.s
            force = 10.0 if a == 1 else -10.0
            ct, st = math.cos(th), math.sin(th)
            temp = (force + 0.05 * thd * thd * st) / 1.1
            tha = (9.8 * st - ct * temp) / (0.5 * (4.0 / 3.0 - 0.1 * ct * ct / 1.1))
            xa = temp - 0.05 * tha * ct / 1.1
            self.s = np.array([x + 0.02 * xd, xd + 0.02 * xa, th + 0.02 * thd, thd + 0.02 * tha])
            self.t += 1
            done = abs(self.s[0]) > 2.4 or abs(self.s[2]) > 0.2095 or self.t >= 30
            return self.s.copy(), 1.0, done, False, {}
    return Env(), np.random.RandomState(seed + 1)


def _play_episode(env, select_action, rewards):
    """The examples' inner loop: act until the episode ends; returns its total reward."""
    state, _ = env.reset()
    ep_reward = 0
    for t in range(1, 10000):
        action = select_action(state)
        state, reward, done, _, _ = env.step(action)
        rewards.append(reward)
        ep_reward += reward
        if done:
            break
    return ep_reward


def reinforce(torch, init, episodes=3):
    nn = torch.nn; F = torch.nn.functional; optim = torch.optim
    Categorical = torch.distributions.Categorical
    env, arng = _cartpole(0)
    gamma = 0.99
    class Policy(nn.Module):
        def __init__(self):
            super(Policy, self).__init__()
            self.affine1 = nn.Linear(4, 32)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(32, 2)
            self.saved_log_probs = []
            self.rewards = []
        def forward(self, x):
            x = self.affine1(x)
            x = self.dropout(x)
            x = F.relu(x)
            action_scores = self.affine2(x)
            return F.softmax(action_scores, dim=1)
    policy = Policy(); init(policy)
    policy.eval()   # dropout draws differ between libraries
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()
    out = []
    def select_action(state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        assert m.sample().shape == (1,)
        p = probs.detach().numpy()[0].astype(np.float64)
        action = torch.tensor([int(arng.rand() < p[1])])
        policy.saved_log_probs.append(m.log_prob(action))
        out.append(m.entropy())
        return action.item()
    def finish_episode():
        R = 0
        policy_loss = []
        returns = deque()
        for r in policy.rewards[::-1]:
            R = r + gamma * R
            returns.appendleft(R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]
        return policy_loss
    running_reward = 10
    for i_episode in range(episodes):
        ep_reward = _play_episode(env, select_action, policy.rewards)
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        out.append(finish_episode())
        out.append(running_reward)
    return out


def actor_critic(torch, init, episodes=3):
    nn = torch.nn; F = torch.nn.functional; optim = torch.optim
    Categorical = torch.distributions.Categorical
    env, arng = _cartpole(3)
    SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])
    class Policy(nn.Module):
        def __init__(self):
            super(Policy, self).__init__()
            self.affine1 = nn.Linear(4, 32)
            self.action_head = nn.Linear(32, 2)
            self.value_head = nn.Linear(32, 1)
            self.saved_actions = []
            self.rewards = []
        def forward(self, x):
            x = F.relu(self.affine1(x))
            action_prob = F.softmax(self.action_head(x), dim=-1)
            state_values = self.value_head(x)
            return action_prob, state_values
    model = Policy(); init(model)
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    eps = np.finfo(np.float32).eps.item()
    out = []
    def select_action(state):
        state = torch.from_numpy(state).float()
        probs, state_value = model(state)
        m = Categorical(probs)
        p = probs.detach().numpy().astype(np.float64)
        action = torch.tensor(int(arng.rand() < p[1]))
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        return action.item()
    def finish_episode():
        R = 0
        saved_actions = model.saved_actions
        policy_losses = []
        value_losses = []
        returns = []
        for r in model.rewards[::-1]:
            R = r + 0.99 * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for (log_prob, value), R in zip(saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        del model.rewards[:]
        del model.saved_actions[:]
        return loss
    for i_episode in range(episodes):
        _play_episode(env, select_action, model.rewards)
        out.append(finish_episode())
    return out


def super_resolution(torch, init, epochs=2):
    nn = torch.nn; init_ = torch.nn.init; optim = torch.optim
    class Net(nn.Module):
        def __init__(self, upscale_factor):
            super(Net, self).__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
            self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
            self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
            self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
            self._initialize_weights()
        def forward(self, x):
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            x = self.pixel_shuffle(self.conv4(x))
            return x
        def _initialize_weights(self):
            init_.orthogonal_(self.conv1.weight, init_.calculate_gain('relu'))
            init_.orthogonal_(self.conv2.weight, init_.calculate_gain('relu'))
            init_.orthogonal_(self.conv3.weight, init_.calculate_gain('relu'))
            init_.orthogonal_(self.conv4.weight)
    model = Net(upscale_factor=3)
    out = []
    # orthogonal_ rows (or columns) are orthonormal, scaled by the gain
    w = model.conv2.weight.detach().reshape(16, -1)
    out.append(w @ w.t() / 2.0)
    init(model)
    rng = np.random.RandomState(4)
    hr = rng.rand(6, 1, 12, 12).astype(np.float32)
    lr_ = hr.reshape(6, 1, 4, 3, 4, 3).mean(axis=(3, 5))
    ds = torch.utils.data.TensorDataset(torch.from_numpy(lr_), torch.from_numpy(hr))
    training_data_loader = torch.utils.data.DataLoader(dataset=ds, batch_size=3, shuffle=False)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        epoch_loss = 0
        for iteration, batch in enumerate(training_data_loader, 1):
            input, target = batch[0], batch[1]
            optimizer.zero_grad()
            loss = criterion(model(input), target)
            epoch_loss += loss.item()
            loss.backward()
            optimizer.step()
        out.append(epoch_loss / len(training_data_loader))
        avg_psnr = 0
        with torch.no_grad():
            for batch in training_data_loader:
                input, target = batch[0], batch[1]
                prediction = model(input)
                mse = criterion(prediction, target)
                psnr = 10 * math.log10(1 / mse.item())
                avg_psnr += psnr
        out.append(avg_psnr / len(training_data_loader))
    # super_resolve.py: run one image, clamp to a byte image
    with torch.no_grad():
        out_img_y = model(torch.from_numpy(lr_[:1])).cpu()[0].detach().numpy()
    out_img_y *= 255.0
    out.append(out_img_y.clip(0, 255))
    return out


def fast_neural_style(torch, init, steps=2):
    nn = torch.nn; F = torch.nn.functional
    class ConvLayer(torch.nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride):
            super(ConvLayer, self).__init__()
            reflection_padding = kernel_size // 2
            self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)
        def forward(self, x):
            out = self.reflection_pad(x)
            out = self.conv2d(out)
            return out
    class ResidualBlock(torch.nn.Module):
        def __init__(self, channels):
            super(ResidualBlock, self).__init__()
            self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
            self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
            self.relu = torch.nn.ReLU()
        def forward(self, x):
            residual = x
            out = self.relu(self.in1(self.conv1(x)))
            out = self.in2(self.conv2(out))
            out = out + residual
            return out
    class UpsampleConvLayer(torch.nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
            super(UpsampleConvLayer, self).__init__()
            self.upsample = upsample
            reflection_padding = kernel_size // 2
            self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)
        def forward(self, x):
            x_in = x
            if self.upsample:
                x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
            out = self.reflection_pad(x_in)
            out = self.conv2d(out)
            return out
    class TransformerNet(torch.nn.Module):
        def __init__(self):
            super(TransformerNet, self).__init__()
            self.conv1 = ConvLayer(3, 8, kernel_size=9, stride=1)
            self.in1 = torch.nn.InstanceNorm2d(8, affine=True)
            self.conv2 = ConvLayer(8, 16, kernel_size=3, stride=2)
            self.in2 = torch.nn.InstanceNorm2d(16, affine=True)
            self.conv3 = ConvLayer(16, 32, kernel_size=3, stride=2)
            self.in3 = torch.nn.InstanceNorm2d(32, affine=True)
            self.res1 = ResidualBlock(32)
            self.res2 = ResidualBlock(32)
            self.deconv1 = UpsampleConvLayer(32, 16, kernel_size=3, stride=1, upsample=2)
            self.in4 = torch.nn.InstanceNorm2d(16, affine=True)
            self.deconv2 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)
            self.in5 = torch.nn.InstanceNorm2d(8, affine=True)
            self.deconv3 = ConvLayer(8, 3, kernel_size=9, stride=1)
            self.relu = torch.nn.ReLU()
        def forward(self, X):
            y = self.relu(self.in1(self.conv1(X)))
            y = self.relu(self.in2(self.conv2(y)))
            y = self.relu(self.in3(self.conv3(y)))
            y = self.res1(y)
            y = self.res2(y)
            y = self.relu(self.in4(self.deconv1(y)))
            y = self.relu(self.in5(self.deconv2(y)))
            y = self.deconv3(y)
            return y
    class Vgg(torch.nn.Module):   # stand-in for vgg16 features: same slicing pattern
        def __init__(self, requires_grad=False):
            super(Vgg, self).__init__()
            features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
                                     nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
                                     nn.MaxPool2d(kernel_size=2, stride=2),
                                     nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True))
            self.slice1 = torch.nn.Sequential()
            self.slice2 = torch.nn.Sequential()
            for x in range(2):
                self.slice1.add_module(str(x), features[x])
            for x in range(2, 7):
                self.slice2.add_module(str(x), features[x])
            if not requires_grad:
                for param in self.parameters():
                    param.requires_grad = False
        def forward(self, X):
            h = self.slice1(X)
            h_relu1_2 = h
            h = self.slice2(h)
            h_relu2_2 = h
            vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2'])
            return vgg_outputs(h_relu1_2, h_relu2_2)
    def gram_matrix(y):
        (b, ch, h, w) = y.size()
        features = y.view(b, ch, w * h)
        features_t = features.transpose(1, 2)
        gram = features.bmm(features_t) / (ch * h * w)
        return gram
    def normalize_batch(batch):
        mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
        std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
        batch = batch.div_(255.0)
        return (batch - mean) / std
    rng = np.random.RandomState(5)
    images = (rng.rand(4, 3, 16, 16) * 255).astype(np.float32)
    style_img = (rng.rand(3, 16, 16) * 255).astype(np.float32)
    transformer = TransformerNet()
    vgg = Vgg(requires_grad=False)
    init(transformer, vgg)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    mse_loss = torch.nn.MSELoss()
    style = torch.from_numpy(style_img).repeat(2, 1, 1, 1)
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]
    ds = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.zeros(4))
    train_loader = torch.utils.data.DataLoader(ds, batch_size=2)
    out = []
    for e in range(steps):
        transformer.train()
        agg_content_loss = 0.
        agg_style_loss = 0.
        count = 0
        for batch_id, (x, _) in enumerate(train_loader):
            n_batch = len(x)
            count += n_batch
            optimizer.zero_grad()
            y = transformer(x)
            y = normalize_batch(y)
            x = normalize_batch(x)
            features_y = vgg(y)
            features_x = vgg(x)
            content_loss = 1e5 * mse_loss(features_y.relu2_2, features_x.relu2_2)
            style_loss = 0.
            for ft_y, gm_s in zip(features_y, gram_style):
                gm_y = gram_matrix(ft_y)
                style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
            style_loss *= 1e10
            total_loss = content_loss + style_loss
            total_loss.backward()
            optimizer.step()
            agg_content_loss += content_loss.item()
            agg_style_loss += style_loss.item()
            out.append([content_loss, style_loss])
        out.append([agg_content_loss / count, agg_style_loss / count])
    transformer.eval().cpu()
    buf = io.BytesIO()
    torch.save(transformer.state_dict(), buf)
    buf.seek(0)
    with torch.no_grad():
        style_model = TransformerNet()
        state_dict = torch.load(buf)
        for k in list(state_dict.keys()):
            if re.search(r'in\d+\.running_(mean|var)$', k):
                del state_dict[k]
        style_model.load_state_dict(state_dict)
        content_image = torch.from_numpy(images[:1])
        output = style_model(content_image).cpu()
    img = output[0].clone().clamp(0, 255).numpy()
    # the program saves img.astype("uint8"); compared before that truncation,
    # which turns a last-bit difference at an integer (1.99999 vs 2.00001) into 1
    out.append(img.transpose(1, 2, 0))
    return out


def siamese(torch, init, epochs=2):
    nn = torch.nn; F = torch.nn.functional; optim = torch.optim
    StepLR = torch.optim.lr_scheduler.StepLR
    def backbone():
        # resnet-like stand-in: conv1, bn1, relu, maxpool, layer, avgpool, fc
        class Small(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
                self.bn1 = nn.BatchNorm2d(8)
                self.relu = nn.ReLU(inplace=True)
                self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
                self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
                self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
                self.fc = nn.Linear(8, 10)
        return Small()
    class SiameseNetwork(nn.Module):
        def __init__(self):
            super(SiameseNetwork, self).__init__()
            self.resnet = backbone()
            self.resnet.conv1 = nn.Conv2d(1, 8, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
            self.fc_in_features = self.resnet.fc.in_features
            self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
            self.fc = nn.Sequential(
                nn.Linear(self.fc_in_features * 2, 16),
                nn.ReLU(inplace=True),
                nn.Linear(16, 1),
            )
            self.sigmoid = nn.Sigmoid()
            self.resnet.apply(self.init_weights)
            self.fc.apply(self.init_weights)
        def init_weights(self, m):
            if isinstance(m, nn.Linear):
                torch.nn.init.xavier_uniform_(m.weight)
                m.bias.data.fill_(0.01)
        def forward_once(self, x):
            output = self.resnet(x)
            output = output.view(output.size()[0], -1)
            return output
        def forward(self, input1, input2):
            output1 = self.forward_once(input1)
            output2 = self.forward_once(input2)
            output = torch.cat((output1, output2), 1)
            output = self.fc(output)
            output = self.sigmoid(output)
            return output
    rng = np.random.RandomState(6)
    digits = rng.rand(24, 1, 12, 12).astype(np.float32)
    labels = rng.randint(0, 3, size=24)
    class APP_MATCHER(torch.utils.data.Dataset):
        def __init__(self, train):
            self.data = torch.from_numpy(digits).clone()
            self.targets = torch.from_numpy(labels)
            self.group_examples()
            self.prng = np.random.RandomState(7 if train else 8)
        def group_examples(self):
            np_arr = np.array(self.targets.clone(), dtype=None, copy=None)
            self.grouped_examples = {}
            for i in range(0, 3):
                self.grouped_examples[i] = np.where((np_arr == i))[0]
        def __len__(self):
            return self.data.shape[0]
        def __getitem__(self, index):
            selected_class = self.prng.randint(0, 3)
            random_index_1 = self.prng.randint(0, self.grouped_examples[selected_class].shape[0])
            index_1 = self.grouped_examples[selected_class][random_index_1]
            image_1 = self.data[index_1].clone().float()
            if index % 2 == 0:
                random_index_2 = self.prng.randint(0, self.grouped_examples[selected_class].shape[0])
                index_2 = self.grouped_examples[selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float()
                target = torch.tensor(1, dtype=torch.float)
            else:
                other_selected_class = self.prng.randint(0, 3)
                while other_selected_class == selected_class:
                    other_selected_class = self.prng.randint(0, 3)
                random_index_2 = self.prng.randint(0, self.grouped_examples[other_selected_class].shape[0])
                index_2 = self.grouped_examples[other_selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float()
                target = torch.tensor(0, dtype=torch.float)
            return image_1, image_2, target
    train_loader = torch.utils.data.DataLoader(APP_MATCHER(True), batch_size=8)
    test_loader = torch.utils.data.DataLoader(APP_MATCHER(False), batch_size=8)
    model = SiameseNetwork(); init(model)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    out = []
    for epoch in range(1, epochs + 1):
        model.train()
        criterion = nn.BCELoss()
        for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
            optimizer.zero_grad()
            outputs = model(images_1, images_2).squeeze()
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            out.append(loss)
        model.eval()
        test_loss = 0
        correct = 0
        with torch.no_grad():
            for (images_1, images_2, targets) in test_loader:
                outputs = model(images_1, images_2).squeeze()
                test_loss += criterion(outputs, targets).sum().item()
                pred = torch.where(outputs > 0.5, 1, 0)
                correct += pred.eq(targets.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        out.append([test_loss, correct, 100. * correct / len(test_loader.dataset)])
        scheduler.step()
        out.append(scheduler.get_last_lr())
    out.append(model.state_dict())
    return out


def time_sequence(torch, init, steps=2):
    nn = torch.nn; optim = torch.optim
    class Sequence(nn.Module):
        def __init__(self):
            super(Sequence, self).__init__()
            self.lstm1 = nn.LSTMCell(1, 12)
            self.lstm2 = nn.LSTMCell(12, 12)
            self.linear = nn.Linear(12, 1)
        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), 12, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 12, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), 12, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), 12, dtype=torch.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            outputs = torch.cat(outputs, dim=1)
            return outputs
    # generate_sine_wave.py
    np.random.seed(2)
    T, L, N = 20, 30, 8
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    buf = io.BytesIO()
    torch.save(data, buf)
    buf.seek(0)
    data = torch.load(buf, weights_only=False)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    seq = Sequence()
    seq.double()
    init(seq)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=5)
    out = []
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            out_ = seq(input)
            loss = criterion(out_, target)
            out.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 10
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            out.append(loss)
            y = pred.detach().numpy()
        out.append(y)
    out.append(optimizer.state_dict()["state"][0]["n_iter"])
    return out


def forward_forward(torch, init, epochs=5):
    nn = torch.nn; Adam = torch.optim.Adam
    def overlay_y_on_x(x, y, classes=10):
        x_ = x.clone()
        x_[:, :classes] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_
    class Net(torch.nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.layers = []
            for d in range(len(dims) - 1):
                self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(torch.device("cpu"))]
        def predict(self, x):
            goodness_per_label = []
            for label in range(10):
                h = overlay_y_on_x(x, label)
                goodness = []
                for layer in self.layers:
                    h = layer(h)
                    goodness = goodness + [h.pow(2).mean(1)]
                goodness_per_label += [sum(goodness).unsqueeze(1)]
            goodness_per_label = torch.cat(goodness_per_label, 1)
            return goodness_per_label.argmax(1)
        def train(self, x_pos, x_neg):
            h_pos, h_neg = x_pos, x_neg
            for i, layer in enumerate(self.layers):
                h_pos, h_neg = layer.train(h_pos, h_neg)
    losses = []
    class Layer(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
            super().__init__(in_features, out_features, bias, device, dtype)
            self.relu = torch.nn.ReLU()
            self.opt = Adam(self.parameters(), lr=0.03)
            self.threshold = 2.0
            self.num_epochs = epochs
        def forward(self, x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))
        def train(self, x_pos, x_neg):
            for i in range(self.num_epochs):
                g_pos = self.forward(x_pos).pow(2).mean(1)
                g_neg = self.forward(x_neg).pow(2).mean(1)
                loss = torch.log1p(torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                losses.append(loss.item())
            return self.forward(x_pos).detach(), self.forward(x_neg).detach()
    rng = np.random.RandomState(9)
    x = torch.from_numpy(((rng.rand(32, 40) - 0.1307) / 0.3081).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 10, size=32))
    net = Net([40, 24, 24])
    init(*net.layers)
    x_pos = overlay_y_on_x(x, y)
    def get_y_neg(y):
        y_neg = y.clone()
        for idx, y_samp in enumerate(y):
            allowed_indices = list(range(10))
            allowed_indices.remove(y_samp.item())
            y_neg[idx] = torch.tensor(allowed_indices)[
                torch.from_numpy(rng.randint(len(allowed_indices), size=(1,)))
            ].item()
        return y_neg
    y_neg = get_y_neg(y)
    x_neg = overlay_y_on_x(x, y_neg)
    net.train(x_pos, x_neg)
    return [losses, x_pos, x_neg, net.predict(x), 1.0 - net.predict(x).eq(y).float().mean().item()]


def gcn(torch, init, epochs=3):
    nn = torch.nn; F = torch.nn.functional; Adam = torch.optim.Adam
    class GraphConv(nn.Module):
        def __init__(self, input_dim, output_dim, use_bias=False):
            super(GraphConv, self).__init__()
            self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
            nn.init.xavier_normal_(self.kernel)
            self.bias = None
            if use_bias:
                self.bias = nn.Parameter(torch.Tensor(output_dim))
                nn.init.zeros_(self.bias)
        def forward(self, input_tensor, adj_mat):
            support = torch.mm(input_tensor, self.kernel)
            output = torch.spmm(adj_mat, support)
            if self.bias is not None:
                output = output + self.bias
            return output
    class GCN(nn.Module):
        def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
            super(GCN, self).__init__()
            self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
            self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
            self.dropout = nn.Dropout(dropout_p)
        def forward(self, input_tensor, adj_mat):
            x = self.gc1(input_tensor, adj_mat)
            x = F.relu(x)
            x = self.dropout(x)
            x = self.gc2(x, adj_mat)
            return F.log_softmax(x, dim=1)
    def load_cora():
        rng = np.random.RandomState(10)
        V, nfeat = 30, 12
        ids = rng.permutation(1000)[:V] + 5
        words = (rng.rand(V, nfeat) < 0.3).astype(np.int32)
        words[3] = 0   # a node without words: 1/0 -> inf -> 0
        cls = np.array(["Theory", "Neural_Networks", "Rule_Learning"])[rng.randint(0, 3, V)]
        content_tensor = np.concatenate([ids.astype(str)[:, None], words.astype(str), cls[:, None]], 1)
        src = rng.randint(0, V, 60); dst = rng.randint(0, V, 60)
        keep = src != dst
        pairs = {(int(a), int(b)) for a, b in zip(src[keep], dst[keep])}
        cites_tensor = np.array([[ids[a], ids[b]] for a, b in sorted(pairs)], dtype=np.int32)
        features = torch.FloatTensor(content_tensor[:, 1:-1].astype(np.int32))
        scale_vector = torch.sum(features, dim=1)
        scale_vector = 1 / scale_vector
        scale_vector[scale_vector == float('inf')] = 0
        scale_vector = torch.diag(scale_vector).to_sparse()
        features = scale_vector @ features
        classes, labels = np.unique(content_tensor[:, -1], return_inverse=True)
        labels = torch.LongTensor(labels)
        idx = content_tensor[:, 0].astype(np.int32)
        idx_map = {id: pos for pos, id in enumerate(idx)}
        edges = np.array(list(map(lambda edge: [idx_map[edge[0]], idx_map[edge[1]]], cites_tensor)),
                         dtype=np.int32)
        V = len(idx)
        E = edges.shape[0]
        adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
        adj_mat = torch.eye(V) + adj_mat
        degree_mat = torch.sum(adj_mat, dim=1)
        degree_mat = torch.sqrt(1 / degree_mat)
        degree_mat[degree_mat == float('inf')] = 0
        degree_mat = torch.diag(degree_mat).to_sparse()
        adj_mat = degree_mat @ adj_mat @ degree_mat
        return features.to_sparse().to('cpu'), labels.to('cpu'), adj_mat.to_sparse().to('cpu')
    features, labels, adj_mat = load_cora()
    out = [features.to_dense(), labels, adj_mat.to_dense()]
    idx = torch.from_numpy(np.random.RandomState(11).permutation(len(labels)))
    idx_test, idx_val, idx_train = idx[:8], idx[8:14], idx[14:]
    gcn = GCN(features.shape[1], 8, labels.max().item() + 1, True, 0.5).to('cpu')
    init(gcn)
    optimizer = Adam(gcn.parameters(), lr=0.01, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    def test(model, criterion, input, target, mask):
        model.eval()
        with torch.no_grad():
            output = model(*input)
            output, target = output[mask], target[mask]
            loss = criterion(output, target)
            acc = (output.argmax(dim=1) == target).float().sum() / len(target)
        return loss.item(), acc.item()
    for epoch in range(epochs):
        gcn.train()
        gcn.dropout.p = 0.0   # dropout draws differ between libraries
        optimizer.zero_grad()
        output = gcn(features, adj_mat)
        loss = criterion(output[idx_train], labels[idx_train])
        loss.backward()
        optimizer.step()
        out.append(loss)
        out.append(test(gcn, criterion, (features, adj_mat), labels, idx_train))
        out.append(test(gcn, criterion, (features, adj_mat), labels, idx_val))
    out.append(test(gcn, criterion, (features, adj_mat), labels, idx_test))
    out.append([p.grad for p in gcn.parameters()])
    return out


def vit(torch, init, epochs=2, batch_first=False):
    nn = torch.nn; optim = torch.optim
    class Args:
        patch_size = 4; n_channels = 3; latent_size = 16; num_heads = 2; num_encoders = 2
        dropout = 0.0; num_classes = 5; batch_size = 4; no_cuda = True
    args = Args()
    class PatchExtractor(nn.Module):
        def __init__(self, patch_size=16):
            super().__init__()
            self.patch_size = patch_size
        def forward(self, input_data):
            batch_size, channels, height, width = input_data.size()
            assert height % self.patch_size == 0 and width % self.patch_size == 0
            num_patches_h = height // self.patch_size
            num_patches_w = width // self.patch_size
            num_patches = num_patches_h * num_patches_w
            patches = input_data.unfold(2, self.patch_size, self.patch_size). \
                unfold(3, self.patch_size, self.patch_size). \
                permute(0, 2, 3, 1, 4, 5). \
                contiguous(). \
                view(batch_size, num_patches, -1)
            return patches
    class InputEmbedding(nn.Module):
        def __init__(self, args):
            super(InputEmbedding, self).__init__()
            self.patch_size = args.patch_size
            self.n_channels = args.n_channels
            self.latent_size = args.latent_size
            use_cuda = not args.no_cuda and torch.cuda.is_available()
            self.device = torch.device("cuda" if use_cuda else "cpu")
            self.batch_size = args.batch_size
            self.input_size = self.patch_size * self.patch_size * self.n_channels
            self.LinearProjection = nn.Linear(self.input_size, self.latent_size)
            self.class_token = nn.Parameter(torch.randn(self.batch_size, 1, self.latent_size).to(self.device))
            self.pos_embedding = nn.Parameter(torch.randn(self.batch_size, 1, self.latent_size).to(self.device))
        def forward(self, input_data):
            input_data = input_data.to(self.device)
            patchify = PatchExtractor(patch_size=self.patch_size)
            patches = patchify(input_data)
            linear_projection = self.LinearProjection(patches).to(self.device)
            b, n, _ = linear_projection.shape
            linear_projection = torch.cat((self.class_token, linear_projection), dim=1)
            pos_embed = self.pos_embedding[:, :n + 1, :]
            linear_projection += pos_embed
            return linear_projection
    class EncoderBlock(nn.Module):
        def __init__(self, args):
            super(EncoderBlock, self).__init__()
            self.latent_size = args.latent_size
            self.num_heads = args.num_heads
            self.dropout = args.dropout
            self.norm = nn.LayerNorm(self.latent_size)
            self.attention = nn.MultiheadAttention(self.latent_size, self.num_heads, dropout=self.dropout,
                                                   batch_first=batch_first)
            self.enc_MLP = nn.Sequential(
                nn.Linear(self.latent_size, self.latent_size * 4),
                nn.GELU(),
                nn.Dropout(self.dropout),
                nn.Linear(self.latent_size * 4, self.latent_size),
                nn.Dropout(self.dropout))
        def forward(self, emb_patches):
            first_norm = self.norm(emb_patches)
            attention_out = self.attention(first_norm, first_norm, first_norm)[0]
            first_added = attention_out + emb_patches
            second_norm = self.norm(first_added)
            mlp_out = self.enc_MLP(second_norm)
            output = mlp_out + first_added
            return output
    class ViT(nn.Module):
        def __init__(self, args):
            super(ViT, self).__init__()
            self.num_encoders = args.num_encoders
            self.latent_size = args.latent_size
            self.num_classes = args.num_classes
            self.dropout = args.dropout
            self.embedding = InputEmbedding(args)
            self.encoders = nn.ModuleList([EncoderBlock(args) for _ in range(self.num_encoders)])
            self.MLPHead = nn.Sequential(
                nn.LayerNorm(self.latent_size),
                nn.Linear(self.latent_size, self.latent_size),
                nn.Linear(self.latent_size, self.num_classes))
        def forward(self, test_input):
            enc_output = self.embedding(test_input)
            for enc_layer in self.encoders:
                enc_output = enc_layer(enc_output)
            class_token_embed = enc_output[:, 0]
            return self.MLPHead(class_token_embed)
    rng = np.random.RandomState(12)
    images = rng.rand(12, 3, 8, 8).astype(np.float32)
    targets = rng.randint(0, 5, 12)
    ds = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(targets))
    train_loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, shuffle=False)
    model = ViT(args).to(torch.device("cpu"))
    init(model)
    optimizer = optim.Adam(model.parameters(), lr=1e-2, weight_decay=3e-2)
    criterion = nn.CrossEntropyLoss()
    out = []
    best_valid_loss = np.inf
    for epoch in range(epochs):
        model.train()
        total_loss = 0.0
        for t, data in enumerate(train_loader):
            images_, labels = data
            optimizer.zero_grad()
            logits = model(images_)
            loss = criterion(logits, labels)
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        out.append(total_loss / len(train_loader))
        model.eval()
        total_loss = 0.0
        correct = 0
        for t, data in enumerate(train_loader):
            images_, labels = data
            logits = model(images_)
            loss = criterion(logits, labels)
            total_loss += loss.item()
            correct += (logits.argmax(1) == labels).sum().item()
        val_loss = total_loss / len(train_loader)
        out.append([val_loss, correct])
        if val_loss < best_valid_loss:
            buf = io.BytesIO()
            torch.save(model.state_dict(), buf)
            best_valid_loss = val_loss
    buf.seek(0)
    model.load_state_dict(torch.load(buf))
    out.append(model(torch.from_numpy(images[:4])))
    return out


def imagenet(torch, init, epochs=2):
    nn = torch.nn
    class BasicBlock(nn.Module):
        expansion = 1
        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample
            self.stride = stride
        def forward(self, x):
            identity = x
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            out = self.relu(out)
            return out
    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes=7, zero_init_residual=True):
            super().__init__()
            self.inplanes = 8
            self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(self.inplanes)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(block, 8, layers[0])
            self.layer2 = self._make_layer(block, 16, layers[1], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16 * block.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            if zero_init_residual:
                for m in self.modules():
                    if isinstance(m, BasicBlock) and m.bn2.weight is not None:
                        nn.init.constant_(m.bn2.weight, 0)
        def _make_layer(self, block, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes * block.expansion:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                    nn.BatchNorm2d(planes * block.expansion))
            layers = [block(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * block.expansion
            for _ in range(1, blocks):
                layers.append(block(self.inplanes, planes))
            return nn.Sequential(*layers)
        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer2(self.layer1(x))
            x = self.avgpool(x)
            x = torch.flatten(x, 1)
            return self.fc(x)
    class AverageMeter(object):
        def __init__(self, name, fmt=':f'):
            self.name = name; self.fmt = fmt; self.reset()
        def reset(self):
            self.val = 0; self.avg = 0; self.sum = 0; self.count = 0
        def update(self, val, n=1):
            self.val = val; self.sum += val * n; self.count += n; self.avg = self.sum / self.count
        def all_reduce(self):
            total = torch.tensor([self.sum, self.count], dtype=torch.float32, device=torch.device("cpu"))
            self.sum, self.count = total.tolist()
            self.avg = self.sum / self.count
        def __str__(self):
            fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'
            return fmtstr.format(**self.__dict__)
    def accuracy(output, target, topk=(1,)):
        with torch.no_grad():
            maxk = max(topk)
            batch_size = target.size(0)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            res = []
            for k in topk:
                correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
                res.append(correct_k.mul_(100.0 / batch_size))
            return res
    model = ResNet(BasicBlock, [1, 1])
    init(model)
    criterion = nn.CrossEntropyLoss().to(torch.device("cpu"))
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1)
    rng = np.random.RandomState(18)
    ds = torch.utils.data.TensorDataset(torch.from_numpy(rng.rand(12, 3, 16, 16).astype(np.float32)),
                                        torch.from_numpy(rng.randint(0, 7, 12)))
    loader = torch.utils.data.DataLoader(ds, batch_size=6, shuffle=False, num_workers=0, pin_memory=False,
                                         sampler=None)
    out = []
    best_acc1 = 0
    for epoch in range(epochs):
        losses = AverageMeter('Loss', ':.4e'); top1 = AverageMeter('Acc@1', ':6.2f'); top5 = AverageMeter('Acc@5', ':6.2f')
        model.train()
        for i, (images, target) in enumerate(loader):
            images = images.to(torch.device("cpu"), non_blocking=True)
            target = target.to(torch.device("cpu"), non_blocking=True)
            output = model(images)
            loss = criterion(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), images.size(0))
            top1.update(acc1[0], images.size(0))
            top5.update(acc5[0], images.size(0))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        out.append([str(losses), str(top1), str(top5)])
        model.eval()
        with torch.no_grad():
            top1 = AverageMeter('Acc@1', ':6.2f')
            for images, target in loader:
                output = model(images)
                acc1, = accuracy(output, target, topk=(1,))
                top1.update(acc1[0], images.size(0))
            top1.all_reduce()
            out.append(str(top1))
            acc1 = top1.avg
        scheduler.step()
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        buf = io.BytesIO()
        torch.save({'epoch': epoch + 1, 'arch': 'resnet', 'state_dict': model.state_dict(),
                    'best_acc1': best_acc1, 'optimizer': optimizer.state_dict(),
                    'scheduler': scheduler.state_dict()}, buf)
    buf.seek(0)
    checkpoint = torch.load(buf, map_location=torch.device("cpu"))
    best_acc1 = checkpoint['best_acc1']
    out.append(float(best_acc1))
    model.load_state_dict(checkpoint['state_dict'])
    optimizer.load_state_dict(checkpoint['optimizer'])
    scheduler.load_state_dict(checkpoint['scheduler'])
    out.append(model.state_dict())
    return out


def regression(torch, init, steps=5):
    F = torch.nn.functional
    POLY_DEGREE = 4
    rng = np.random.RandomState(19)
    W_target = torch.from_numpy(rng.randn(POLY_DEGREE, 1).astype(np.float32)) * 5
    b_target = torch.from_numpy(rng.randn(1).astype(np.float32)) * 5
    def make_features(x):
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)
    def f(x):
        return x.mm(W_target) + b_target.item()
    def poly_desc(W, b):
        result = 'y = '
        for i, w in enumerate(W):
            result += '{:+.2f} x^{} '.format(w, i + 1)
        result += '{:+.2f}'.format(b[0])
        return result
    def get_batch(batch_size=8):
        random = torch.from_numpy(rng.randn(batch_size).astype(np.float32))
        x = make_features(random)
        y = f(x)
        return x, y
    fc = torch.nn.Linear(W_target.size(0), 1)
    init(fc)
    out = []
    from itertools import count
    for batch_idx in count(1):
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        out.append(loss)
        if batch_idx >= steps:
            break
    out.append('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
    out.append('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
    out.append('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
    return out


def mnist_rnn(torch, init, epochs=2):
    nn = torch.nn; F = torch.nn.functional; optim = torch.optim
    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.rnn = nn.LSTM(input_size=8, hidden_size=16, batch_first=True)
            self.batchnorm = nn.BatchNorm1d(16)
            self.dropout1 = nn.Dropout2d(0.25)
            self.dropout2 = nn.Dropout2d(0.5)
            self.fc1 = nn.Linear(16, 12)
            self.fc2 = nn.Linear(12, 10)
        def forward(self, input):
            input = input.reshape(-1, 8, 8)
            output, hidden = self.rnn(input)
            output = output[:, -1, :]
            output = self.batchnorm(output)
            output = self.dropout1(output)
            output = self.fc1(output)
            output = F.relu(output)
            output = self.dropout2(output)
            output = self.fc2(output)
            output = F.log_softmax(output, dim=1)
            return output
    model = Net(); init(model)
    model.dropout1.p = model.dropout2.p = 0.0
    optimizer = optim.Adadelta(model.parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    rng = np.random.RandomState(20)
    ds = torch.utils.data.TensorDataset(torch.from_numpy(rng.rand(16, 1, 8, 8).astype(np.float32)),
                                        torch.from_numpy(rng.randint(0, 10, 16)))
    train_loader = torch.utils.data.DataLoader(ds, batch_size=8)
    out = []
    for epoch in range(1, epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            out.append(loss)
        model.eval()
        test_loss = 0
        correct = 0
        with torch.no_grad():
            for data, target in train_loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction='sum').item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()
        test_loss /= len(train_loader.dataset)
        out.append([test_loss, correct])
        scheduler.step()
    return out


def schedulers(torch, init, kind="onecycle"):
    nn = torch.nn; F = torch.nn.functional; optim = torch.optim
    rng = np.random.RandomState(13)
    X = torch.from_numpy(rng.randn(48, 6).astype(np.float32))
    y = torch.from_numpy((rng.randn(48) > 0).astype(np.int64))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=12)
    model = nn.Sequential(nn.Linear(6, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
    init(model)
    if kind == "onecycle":
        optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
        scheduler = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, steps_per_epoch=len(loader), epochs=4)
    elif kind == "plateau":
        optimizer = optim.Adam(model.parameters(), lr=0.05)
        scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'min', factor=0.5, patience=0)
    elif kind == "cosine_warm":
        optimizer = optim.AdamW(model.parameters(), lr=0.05)
        warm = optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=2)
        cos = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6)
        scheduler = optim.lr_scheduler.SequentialLR(optimizer, [warm, cos], milestones=[2])
    elif kind == "multistep":
        optimizer = optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5)
        scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 3], gamma=0.1)
    elif kind == "lambda":
        optimizer = optim.SGD([{"params": model[0].parameters()},
                               {"params": model[3].parameters(), "lr": 0.02}], lr=0.1, momentum=0.9)
        scheduler = optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=[lambda e: 0.9 ** e, lambda e: 1.0 / (e + 1)])
    elif kind == "exp":
        optimizer = optim.Adagrad(model.parameters(), lr=0.1)
        scheduler = optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)
    out = []
    for epoch in range(4):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            if kind == "onecycle":
                scheduler.step()
            out.append(loss.item())
        model.eval()
        with torch.no_grad():
            val = F.cross_entropy(model(X), y).item()
            acc = (model(X).argmax(dim=1) == y).float().mean().item()
        out.append([val, acc])
        if kind == "plateau":
            scheduler.step(val)
        elif kind != "onecycle":
            scheduler.step()
        out.append([g["lr"] for g in optimizer.param_groups])
        if epoch == 1:
            # checkpoint and resume into fresh objects, as the imagenet example does
            buf = io.BytesIO()
            torch.save({'epoch': epoch + 1, 'state_dict': model.state_dict(),
                        'optimizer': optimizer.state_dict(), 'scheduler': scheduler.state_dict()}, buf)
            buf.seek(0)
            checkpoint = torch.load(buf)
            model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            scheduler.load_state_dict(checkpoint['scheduler'])
            out.append(checkpoint['epoch'])
    out.append(scheduler.state_dict().get("last_epoch", 0))
    return out


F64 = dict(rtol=1e-9, atol=1e-12)

CASES = {
    "vae": (vae, {}, {}),
    "word_lm_lstm_tied": (word_lm, dict(model_type="LSTM", tied=True), {}),
    "word_lm_gru": (word_lm, dict(model_type="GRU", tied=False), {}),
    "word_lm_rnn_tanh": (word_lm, dict(model_type="RNN_TANH", tied=False), {}),
    "word_lm_transformer": (word_lm, dict(model_type="Transformer"), {}),
    "reinforce": (reinforce, {}, {}),
    "actor_critic": (actor_critic, {}, {}),
    "super_resolution": (super_resolution, {}, {}),
    # the stylised image comes after Adam steps of a loss weighted 1e10: a
    # last-bit difference of a near-zero gradient is a whole step of its weight
    "fast_neural_style": (fast_neural_style, {}, dict(rtol=1e-3, atol=1e-2)),
    "siamese_network": (siamese, {}, {}),
    "time_sequence_prediction": (time_sequence, {}, F64),
    "mnist_forward_forward": (forward_forward, {}, {}),
    "gcn": (gcn, {}, {}),
    "vision_transformer": (vit, {}, {}),
    "vision_transformer_batch_first": (vit, dict(batch_first=True), {}),
    "imagenet": (imagenet, {}, {}),
    "regression": (regression, {}, {}),
    "mnist_rnn": (mnist_rnn, {}, {}),
    "onecycle_sgd_nesterov": (schedulers, dict(kind="onecycle"), {}),
    "plateau_adam": (schedulers, dict(kind="plateau"), {}),
    "linear_cosine_sequential_adamw": (schedulers, dict(kind="cosine_warm"), {}),
    "multistep_rmsprop": (schedulers, dict(kind="multistep"), {}),
    "lambda_two_groups": (schedulers, dict(kind="lambda"), {}),
    "exponential_adagrad": (schedulers, dict(kind="exp"), {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_program_matches_torch(name):
    prog, kw, tol = CASES[name]
    got, want = run_pair(prog, torch, **kw)
    assert_close(got, want, **tol)
