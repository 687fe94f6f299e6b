"""Programs in the style of the PyTorch tutorials, each written once against the module
it is given and run under torch and under ptcore from the same initial weights and data:
language translation with nn.Transformer (padding and causal masks, greedy decoding), text
classification with EmbeddingBag offsets (dense and sparse gradients), transfer learning
(frozen backbone, set_grad_enabled phases, deepcopy of the best state dict), "What is
torch.nn really?", "Learning PyTorch with Examples" (manual gradients, a custom Function,
a dynamic net), parametrizations, pruning, SWA/EMA, torch.func ensembling, per-sample
gradients and Jacobians, forward-mode AD, CPU autocast with GradScaler, activation
checkpointing, channels_last, the chatbot (packed bidirectional GRU encoder, Luong
attention, masked NLL), PPO-style clipped updates over distributions, a conditional VAE,
and DataLoader workers and samplers.

Random draws that torch and ptcore make differently (dropout masks, sampling, shuffling)
are replaced by NumPy draws or switched off."""
import copy
import io
import itertools
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

from program_pairs import assert_close, one_thread, run_pair  # noqa: E402

PAD_token, SOS_token, EOS_token = 0, 1, 2


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread(torch):
        yield


def translation(torch, init, epochs=2):
    nn = torch.nn; Tensor = torch.Tensor
    from_numpy = torch.from_numpy
    pad_sequence = torch.nn.utils.rnn.pad_sequence
    PAD_IDX, BOS_IDX, EOS_IDX = 1, 2, 3
    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size, dropout, maxlen=50):
            super(PositionalEncoding, self).__init__()
            den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = torch.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = torch.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = torch.sin(pos * den)
            pos_embedding[:, 1::2] = torch.cos(pos * den)
            pos_embedding = pos_embedding.unsqueeze(-2)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('pos_embedding', pos_embedding)
        def forward(self, token_embedding: Tensor):
            return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])
    class TokenEmbedding(nn.Module):
        def __init__(self, vocab_size: int, emb_size):
            super(TokenEmbedding, self).__init__()
            self.embedding = nn.Embedding(vocab_size, emb_size)
            self.emb_size = emb_size
        def forward(self, tokens: Tensor):
            return self.embedding(tokens.long()) * math.sqrt(self.emb_size)
    class Seq2SeqTransformer(nn.Module):
        def __init__(self, num_encoder_layers, num_decoder_layers, emb_size, nhead, src_vocab_size,
                     tgt_vocab_size, dim_feedforward=512, dropout=0.1):
            super(Seq2SeqTransformer, self).__init__()
            self.transformer = nn.Transformer(d_model=emb_size, nhead=nhead,
                                              num_encoder_layers=num_encoder_layers,
                                              num_decoder_layers=num_decoder_layers,
                                              dim_feedforward=dim_feedforward, dropout=dropout)
            self.generator = nn.Linear(emb_size, tgt_vocab_size)
            self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
            self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
            self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)
        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                    memory_key_padding_mask):
            src_emb = self.positional_encoding(self.src_tok_emb(src))
            tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                    src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
            return self.generator(outs)
        def encode(self, src, src_mask):
            return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)), src_mask)
        def decode(self, tgt, memory, tgt_mask):
            return self.transformer.decoder(self.positional_encoding(self.tgt_tok_emb(tgt)), memory, tgt_mask)
    def generate_square_subsequent_mask(sz):
        mask = (torch.triu(torch.ones((sz, sz))) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
        return mask
    def create_mask(src, tgt):
        src_seq_len = src.shape[0]
        tgt_seq_len = tgt.shape[0]
        tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
        src_mask = torch.zeros((src_seq_len, src_seq_len)).type(torch.bool)
        src_padding_mask = (src == PAD_IDX).transpose(0, 1)
        tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
        return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask
    rng = np.random.RandomState(14)
    pairs = []
    for i in range(12):
        ls, lt = rng.randint(2, 7), rng.randint(2, 7)
        pairs.append((list(rng.randint(4, 20, ls)), list(rng.randint(4, 18, lt))))
    def tensor_transform(token_ids):
        return torch.cat((torch.tensor([BOS_IDX]), torch.tensor(token_ids), torch.tensor([EOS_IDX])))
    def collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(tensor_transform(src_sample))
            tgt_batch.append(tensor_transform(tgt_sample))
        src_batch = pad_sequence(src_batch, padding_value=PAD_IDX)
        tgt_batch = pad_sequence(tgt_batch, padding_value=PAD_IDX)
        return src_batch, tgt_batch
    transformer = Seq2SeqTransformer(2, 2, 16, 2, 20, 18, 32, dropout=0.0)
    for p in transformer.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    init(transformer)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
    optimizer = torch.optim.Adam(transformer.parameters(), lr=0.001, betas=(0.9, 0.98), eps=1e-9)
    train_dataloader = torch.utils.data.DataLoader(pairs, batch_size=4, collate_fn=collate_fn)
    out = []
    for epoch in range(epochs):
        transformer.train()
        losses = 0
        for src, tgt in train_dataloader:
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
            logits = transformer(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                                 src_padding_mask)
            optimizer.zero_grad()
            tgt_out = tgt[1:, :]
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            loss.backward()
            optimizer.step()
            losses += loss.item()
            out.append(loss.item())
        out.append(losses / len(list(train_dataloader)))
        transformer.eval()
        losses = 0
        with torch.no_grad():
            for src, tgt in train_dataloader:
                tgt_input = tgt[:-1, :]
                src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
                logits = transformer(src, tgt_input, src_mask, tgt_mask, src_padding_mask,
                                     tgt_padding_mask, src_padding_mask)
                tgt_out = tgt[1:, :]
                losses += loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1)).item()
        out.append(losses)
    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        memory = model.encode(src, src_mask)
        ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long)
        for i in range(max_len - 1):
            tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool))
            out_ = model.decode(ys, memory, tgt_mask)
            out_ = out_.transpose(0, 1)
            prob = model.generator(out_[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.item()
            ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
            if next_word == EOS_IDX:
                break
        return ys
    transformer.eval()
    src = tensor_transform(pairs[0][0]).view(-1, 1)
    num_tokens = src.shape[0]
    src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
    tgt_tokens = greedy_decode(transformer, src, src_mask, max_len=num_tokens + 5, start_symbol=BOS_IDX).flatten()
    out.append(tgt_tokens)
    return out


def text_classification(torch, init, epochs=2, sparse=False):
    nn = torch.nn
    rng = np.random.RandomState(15)
    vocab_size, num_class = 30, 4
    data = [(int(rng.randint(1, 5)), list(rng.randint(0, vocab_size, rng.randint(1, 9)))) for _ in range(24)]
    text_pipeline = lambda x: x
    label_pipeline = lambda x: int(x) - 1
    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for _label, _text in batch:
            label_list.append(label_pipeline(_label))
            processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        text_list = torch.cat(text_list)
        return label_list, text_list, offsets
    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super(TextClassificationModel, self).__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=sparse)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()
        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()
        def forward(self, text, offsets):
            embedded = self.embedding(text, offsets)
            return self.fc(embedded)
    model = TextClassificationModel(vocab_size, 8, num_class)
    init(model)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    train_dataloader = torch.utils.data.DataLoader(data[:16], batch_size=4, shuffle=False, collate_fn=collate_batch)
    valid_dataloader = torch.utils.data.DataLoader(data[16:], batch_size=4, shuffle=False, collate_fn=collate_batch)
    def evaluate(dataloader):
        model.eval()
        total_acc, total_count = 0, 0
        with torch.no_grad():
            for idx, (label, text, offsets) in enumerate(dataloader):
                predicted_label = model(text, offsets)
                loss = criterion(predicted_label, label)
                total_acc += (predicted_label.argmax(1) == label).sum().item()
                total_count += label.size(0)
        return total_acc / total_count
    out = []
    total_accu = None
    for epoch in range(1, epochs + 1):
        model.train()
        total_acc, total_count = 0, 0
        for idx, (label, text, offsets) in enumerate(train_dataloader):
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            if not sparse:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            out.append(loss)
        accu_val = evaluate(valid_dataloader)
        if total_accu is not None and total_accu > accu_val:
            scheduler.step()
        else:
            total_accu = accu_val
        out.append([accu_val, total_acc / total_count, scheduler.get_last_lr()])
    text = torch.tensor([3, 5, 7, 11])
    with torch.no_grad():
        output = model(text, torch.tensor([0]))
        out.append(output.argmax(1).item() + 1)
    out.append(model.embedding.weight)
    return out


def transfer_learning(torch, init, num_epochs=3, fixed=True):
    nn = torch.nn; optim = torch.optim; lr_scheduler = torch.optim.lr_scheduler
    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(6)
            self.relu = nn.ReLU(inplace=True)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(6, 10)
        def forward(self, x):
            x = self.avgpool(self.relu(self.bn1(self.conv1(x))))
            x = torch.flatten(x, 1)
            return self.fc(x)
    rng = np.random.RandomState(16)
    sets = {x: torch.utils.data.TensorDataset(torch.from_numpy(rng.rand(10, 3, 8, 8).astype(np.float32)),
                                              torch.from_numpy(rng.randint(0, 2, 10)))
            for x in ['train', 'val']}
    dataloaders = {x: torch.utils.data.DataLoader(sets[x], batch_size=4, shuffle=False) for x in ['train', 'val']}
    dataset_sizes = {x: len(sets[x]) for x in ['train', 'val']}
    model_conv = Backbone()
    if fixed:
        for param in model_conv.parameters():
            param.requires_grad = False
    num_ftrs = model_conv.fc.in_features
    model_conv.fc = nn.Linear(num_ftrs, 2)
    init(model_conv)
    criterion = nn.CrossEntropyLoss()
    if fixed:
        optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.1, momentum=0.9)
    else:
        optimizer_conv = optim.SGD(model_conv.parameters(), lr=0.1, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=2, gamma=0.1)
    model, optimizer, scheduler = model_conv, optimizer_conv, exp_lr_scheduler
    out = []
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    best_acc = 0.0
    best_model_wts = copy.deepcopy(model.state_dict())
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            out.append([epoch_loss, epoch_acc])
            if phase == 'val' and epoch_acc >= best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
                buf = io.BytesIO()
                torch.save(model.state_dict(), buf)
    buf.seek(0)
    model.load_state_dict(torch.load(buf, weights_only=True))
    out.append(best_model_wts)
    out.append(model.state_dict())
    out.append([p.grad is None for p in model.parameters()])
    was_training = model.training
    model.eval()
    with torch.no_grad():
        inputs, labels = next(iter(dataloaders['val']))
        outputs = model(inputs)
        _, preds = torch.max(outputs, 1)
        out.append(preds)
        model.train(mode=was_training)
    return out


def nn_tutorial(torch, init, epochs=2):
    nn = torch.nn; F = torch.nn.functional; optim = torch.optim
    TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader
    rng = np.random.RandomState(17)
    x_train = rng.rand(40, 64).astype(np.float32)
    y_train = rng.randint(0, 10, 40)
    x_valid = rng.rand(20, 64).astype(np.float32)
    y_valid = rng.randint(0, 10, 20)
    x_train, y_train, x_valid, y_valid = map(torch.tensor, (x_train, y_train, x_valid, y_valid))
    n, c = x_train.shape
    out = [[n, c], x_train.min(), x_train.max(), y_train.min(), y_train.max()]
    w0 = rng.randn(64, 10).astype(np.float32)
    weights = torch.from_numpy(w0) / math.sqrt(64)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)
    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)
    def model(xb):
        return log_softmax(xb @ weights + bias)
    bs = 8
    xb = x_train[0:bs]
    preds = model(xb)
    out.append([preds[0], preds.shape])
    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()
    loss_func = nll
    yb = y_train[0:bs]
    out.append(loss_func(preds, yb))
    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()
    out.append(accuracy(preds, yb))
    lr = 0.5
    def fit_manual(params):
        for epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = loss_func(pred, yb)
                loss.backward()
                with torch.no_grad():
                    for p in params:
                        p -= p.grad * lr
                        p.grad.zero_()
        return xb, yb
    xb, yb = fit_manual([weights, bias])
    out.append([loss_func(model(xb), yb), accuracy(model(xb), yb)])
    loss_func = F.cross_entropy
    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.from_numpy(w0) / math.sqrt(64))
            self.bias = nn.Parameter(torch.zeros(10))
        def forward(self, xb):
            return xb @ self.weights + self.bias
    model = Mnist_Logistic()
    out.append(loss_func(model(xb), yb))
    fit_manual(list(model.parameters()))
    out.append(loss_func(model(xb), yb))
    train_ds = TensorDataset(x_train, y_train)
    valid_ds = TensorDataset(x_valid, y_valid)
    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)
    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            out.append(val_loss)
    def get_data(train_ds, valid_ds, bs):
        return (DataLoader(train_ds, batch_size=bs, shuffle=False),
                DataLoader(valid_ds, batch_size=bs * 2))
    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func
        def forward(self, x):
            return self.func(x)
    def preprocess(x, y):
        return x.view(-1, 1, 8, 8), y
    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func
        def __len__(self):
            return len(self.dl)
        def __iter__(self):
            for b in self.dl:
                yield (self.func(*b))
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)
    model = nn.Sequential(
        nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    init(model)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    model2 = nn.Sequential(Lambda(lambda x: x.view(-1, 1, 8, 8)), nn.Conv2d(1, 10, 3, 2, 1), nn.ReLU(),
                           nn.AvgPool2d(4), Lambda(lambda x: x.view(x.size(0), -1)))
    init(model2)
    opt = optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    fit(epochs, model2, loss_func, opt, train_dl, valid_dl)
    return out


def learning_with_examples(torch, init, steps=30):
    # "Learning PyTorch with Examples": tensors, autograd, custom Function, nn, optim, dynamic net
    out = []
    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)
    rng = np.random.RandomState(21)
    a0, b0, c0, d0 = (float(v) for v in rng.randn(4))
    a = torch.tensor(a0, device=device, dtype=dtype)
    b = torch.tensor(b0, device=device, dtype=dtype)
    c = torch.tensor(c0, device=device, dtype=dtype)
    d = torch.tensor(d0, device=device, dtype=dtype)
    learning_rate = 1e-6
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    out.append([loss, f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3'])
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)
        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    for t in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    out.append([loss, a, b, c, d])
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    init(model)
    loss_fn = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    linear_layer = model[0]
    out.append([loss, f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
                      f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3'])
    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))
            self.e = torch.nn.Parameter(torch.randn(()))
            self.k = 0
        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            self.k += 1
            for exp in range(4, 4 + self.k % 2):
                y = y + self.e * x ** exp
            return y
        def string(self):
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'
    model = DynamicNet()
    init(model)
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    out.append([loss, model.string()])
    return out


def parametrizations(torch, init, steps=3):
    nn = torch.nn; parametrize = torch.nn.utils.parametrize
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
        def right_inverse(self, A):
            return A.triu()
    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)
    class CayleyMap(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("Id", torch.eye(n))
        def forward(self, X):
            return torch.linalg.solve(self.Id - X, self.Id + X)
    class MatrixExponential(nn.Module):
        def forward(self, X):
            return torch.matrix_exp(X)
    class NoisyParametrization(nn.Module):
        def forward(self, X):
            return X
    out = []
    layer = nn.Linear(4, 4)
    init(layer)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    A = layer.weight
    out.append([A, torch.allclose(A, A.T)])
    out.append(sorted(layer.state_dict().keys()))
    out.append(layer.parametrizations.weight.original)
    out.append(str(layer))
    layer_orth = nn.Linear(3, 3)
    init(layer_orth)
    parametrize.register_parametrization(layer_orth, "weight", Skew())
    parametrize.register_parametrization(layer_orth, "weight", CayleyMap(3))
    X = layer_orth.weight
    out.append([X, torch.dist(X.T @ X, torch.eye(3))])
    layer_spd = nn.Linear(3, 3)
    init(layer_spd)
    parametrize.register_parametrization(layer_spd, "weight", Symmetric())
    parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
    out.append(layer_spd.weight)
    with parametrize.cached():
        Xc = layer_orth.weight
        Yc = layer_orth.weight
        out.append(Xc is Yc)
    X0 = torch.from_numpy(np.random.RandomState(22).rand(4, 4).astype(np.float32))
    layer.weight = X0 + X0.T
    out.append(layer.parametrizations.weight.original)
    opt = torch.optim.SGD(layer_orth.parameters(), lr=0.1)
    xin = torch.from_numpy(np.random.RandomState(23).rand(5, 3).astype(np.float32))
    for _ in range(steps):
        opt.zero_grad()
        loss = layer_orth(xin).pow(2).sum()
        loss.backward()
        opt.step()
        out.append(loss)
    out.append(layer_orth.parametrizations.weight.original.grad)
    parametrize.remove_parametrizations(layer_orth, "weight", leave_parametrized=True)
    out.append([layer_orth.weight, parametrize.is_parametrized(layer_orth)])
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    out.append(layer.weight)
    # torch.nn.utils.parametrizations
    lin = nn.Linear(5, 3)
    init(lin)
    lin = nn.utils.parametrizations.weight_norm(lin)
    out.append([lin.parametrizations.weight.original0, lin.parametrizations.weight.original1, lin.weight])
    lin2 = nn.Linear(5, 3)
    init(lin2)
    sn = nn.utils.parametrizations.spectral_norm(lin2)
    out.append(sorted(sn.state_dict().keys()))
    return out


def pruning(torch, init):
    nn = torch.nn; F = torch.nn.functional
    import importlib
    prune = importlib.import_module(torch.__name__ + ".nn.utils.prune")
    class LeNet(nn.Module):
        def __init__(self):
            super(LeNet, self).__init__()
            self.conv1 = nn.Conv2d(1, 6, 3)
            self.conv2 = nn.Conv2d(6, 16, 3)
            self.fc1 = nn.Linear(16 * 5 * 5, 12)
            self.fc2 = nn.Linear(12, 10)
        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, int(x.nelement() / x.shape[0]))
            x = F.relu(self.fc1(x))
            return self.fc2(x)
    model = LeNet()
    init(model)
    out = []
    module = model.conv1
    out.append(sorted(n for n, _ in module.named_parameters()))
    prune.l1_unstructured(module, name="bias", amount=3)
    out.append([module.bias_mask, module.bias, sorted(n for n, _ in module.named_buffers())])
    out.append(len(module._forward_pre_hooks))
    prune.l1_unstructured(module, name="weight", amount=0.3)
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    out.append(module.weight_mask)
    for hook in module._forward_pre_hooks.values():
        if hook._tensor_name == "weight":
            break
    out.append([type(h).__name__ for h in hook])
    prune.remove(module, 'weight')
    out.append([sorted(n for n, _ in module.named_parameters()), module.weight])
    new_model = LeNet()
    init(new_model)
    for name, m in new_model.named_modules():
        if isinstance(m, torch.nn.Conv2d):
            prune.l1_unstructured(m, name='weight', amount=0.2)
        elif isinstance(m, torch.nn.Linear):
            prune.l1_unstructured(m, name='weight', amount=0.4)
    out.append(sorted(dict(new_model.named_buffers()).keys()))
    model = LeNet()
    init(model)
    parameters_to_prune = ((model.conv1, 'weight'), (model.conv2, 'weight'), (model.fc1, 'weight'),
                           (model.fc2, 'weight'))
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
    out.append([float(torch.sum(model.conv1.weight == 0)), float(torch.sum(model.fc1.weight == 0)),
                100. * float(torch.sum(model.conv1.weight == 0) + torch.sum(model.conv2.weight == 0)
                             + torch.sum(model.fc1.weight == 0) + torch.sum(model.fc2.weight == 0))
                / float(model.conv1.weight.nelement() + model.conv2.weight.nelement()
                        + model.fc1.weight.nelement() + model.fc2.weight.nelement())])
    class FooBarPruningMethod(prune.BasePruningMethod):
        PRUNING_TYPE = 'unstructured'
        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask
    def foobar_unstructured(module, name):
        FooBarPruningMethod.apply(module, name)
        return module
    model2 = LeNet()
    init(model2)
    foobar_unstructured(model2.fc2, name='bias')
    out.append(model2.fc2.bias_mask)
    x = torch.from_numpy(np.random.RandomState(24).rand(2, 1, 28, 28).astype(np.float32))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        loss = model(x).logsumexp(1).sum()
        loss.backward()
        opt.step()
        out.append(loss)
    out.append(model.state_dict())
    return out


def swa(torch, init, epochs=4):
    nn = torch.nn; F = torch.nn.functional
    AveragedModel, SWALR = torch.optim.swa_utils.AveragedModel, torch.optim.swa_utils.SWALR
    rng = np.random.RandomState(25)
    ds = torch.utils.data.TensorDataset(torch.from_numpy(rng.randn(24, 5).astype(np.float32)),
                                        torch.from_numpy(rng.randint(0, 3, 24)))
    loader = torch.utils.data.DataLoader(ds, batch_size=8)
    model = nn.Sequential(nn.Linear(5, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    init(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    swa_model = AveragedModel(model)
    ema_model = AveragedModel(model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
    swa_start = 2
    swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=2)
    out = []
    for epoch in range(epochs):
        for input, target in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(input), target)
            loss.backward()
            optimizer.step()
            ema_model.update_parameters(model)
            out.append(loss)
        if epoch > swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()
        out.append(optimizer.param_groups[0]["lr"])
    torch.optim.swa_utils.update_bn(loader, swa_model)
    out.append(swa_model.state_dict())
    out.append(ema_model.state_dict())
    swa_model.eval()
    out.append(swa_model(ds.tensors[0]))
    return out


def func_ensembling(torch, init):
    nn = torch.nn; F = torch.nn.functional
    from_fn = torch.func
    class SimpleMLP(nn.Module):
        def __init__(self):
            super(SimpleMLP, self).__init__()
            self.fc1 = nn.Linear(16, 12)
            self.fc2 = nn.Linear(12, 8)
            self.fc3 = nn.Linear(8, 4)
        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x
    num_models = 3
    rng = np.random.RandomState(26)
    data = torch.from_numpy(rng.randn(5, 4, 4).astype(np.float32))
    targets = torch.from_numpy(rng.randint(0, 4, 5))
    models = [SimpleMLP() for _ in range(num_models)]
    init(*models)
    minibatches = data[:3].unsqueeze(0).expand(num_models, 3, 4, 4)
    predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
    params, buffers = from_fn.stack_module_state(models)
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to('meta')
    def fmodel(params, buffers, x):
        return from_fn.functional_call(base_model, (params, buffers), (x,))
    predictions1_vmap = from_fn.vmap(fmodel)(params, buffers, minibatches)
    out = [predictions_diff_minibatch_loop, predictions1_vmap,
           torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)]
    predictions2_vmap = from_fn.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data)
    out.append(predictions2_vmap)
    # per-sample gradients
    model = models[0]
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = from_fn.functional_call(model, (params, buffers), (batch,))
        loss = F.cross_entropy(predictions, targets)
        return loss
    ft_compute_grad = from_fn.grad(compute_loss)
    ft_compute_sample_grad = from_fn.vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    out.append(ft_per_sample_grads)
    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = F.cross_entropy(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))
    per_sample_grads = [compute_grad(data[i], targets[i]) for i in range(5)]
    per_sample_grads = zip(*per_sample_grads)
    per_sample_grads = [torch.stack(shards) for shards in per_sample_grads]
    out.append(per_sample_grads)
    # jacobians / hessians tutorial
    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()
    D = 4
    weight = torch.from_numpy(rng.randn(D, D).astype(np.float32))
    bias = torch.from_numpy(rng.randn(D).astype(np.float32))
    x = torch.from_numpy(rng.randn(D).astype(np.float32))
    jacobian = from_fn.jacrev(predict, argnums=2)(weight, bias, x)
    ft_jacobian, ft_jacobian_b = from_fn.jacrev(predict, argnums=(0, 1))(weight, bias, x)
    jf = from_fn.jacfwd(predict, argnums=2)(weight, bias, x)
    hess = from_fn.hessian(predict, argnums=2)(weight, bias, x)
    hess2 = from_fn.jacfwd(from_fn.jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    xb = torch.from_numpy(rng.randn(3, D).astype(np.float32))
    bj = from_fn.vmap(from_fn.jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xb)
    def hvp(f, primals, tangents):
        return from_fn.jvp(from_fn.grad(f), primals, tangents)[1]
    def f(x):
        return x.sin().sum()
    xh = torch.from_numpy(rng.randn(6).astype(np.float32))
    tangent = torch.from_numpy(rng.randn(6).astype(np.float32))
    out.append([jacobian, ft_jacobian, ft_jacobian_b, jf, hess, hess2, bj, hvp(f, (xh,), (tangent,))])
    return out


def forward_ad(torch, init):
    fwAD = torch.autograd.forward_ad
    nn = torch.nn; F = torch.nn.functional
    rng = np.random.RandomState(27)
    primal = torch.from_numpy(rng.randn(10, 10).astype(np.float32))
    tangent = torch.from_numpy(rng.randn(10, 10).astype(np.float32))
    def fn(x, y):
        return x ** 2 + y ** 2
    out = []
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        plain_tensor = torch.from_numpy(rng.randn(10, 10).astype(np.float32))
        dual_output = fn(dual_input, plain_tensor)
        jvp = fwAD.unpack_dual(dual_output).tangent
        out.append([fwAD.unpack_dual(dual_output).primal, jvp])
    model = nn.Linear(5, 5)
    init(model)
    input = torch.from_numpy(rng.randn(16, 5).astype(np.float32))
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.from_numpy(rng.randn(*p.shape).astype(np.float32)) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out_ = model(input)
        jvp = fwAD.unpack_dual(out_).tangent
        out.append(jvp)
    functional_call = torch.func.functional_call
    model = nn.Linear(5, 5)
    init(model)
    dual_params = {}
    with fwAD.dual_level():
        for name, p in params.items():
            dual_params[name] = fwAD.make_dual(p, tangents[name])
        out_ = functional_call(model, dual_params, input)
        jvp2 = fwAD.unpack_dual(out_).tangent
    out.append(jvp2)
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result
            return result
        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO
    fn2 = Fn.apply
    primal = torch.from_numpy(rng.randn(10, 10).astype(np.float64)).requires_grad_()
    tangent = torch.from_numpy(rng.randn(10, 10).astype(np.float64))
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn2(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent
    out.append(jvp)
    out.append(torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                        check_undefined_grad=False, check_batched_grad=False))
    return out


def amp_cpu(torch, init, steps=3):
    nn = torch.nn
    rng = np.random.RandomState(29)
    data = [torch.from_numpy(rng.randn(8, 16).astype(np.float32)) for _ in range(steps)]
    targets = [torch.from_numpy(rng.randn(8, 16).astype(np.float32)) for _ in range(steps)]
    net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 16))
    init(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.MSELoss()
    scaler = torch.amp.GradScaler("cpu", enabled=True)
    out = []
    for input, target in zip(data, targets):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            output = net(input)
            assert output.dtype is torch.bfloat16
            loss = loss_fn(output, target)
            assert loss.dtype is torch.float32
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        out.append(loss)
    out.append(scaler.get_scale())
    checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(), "scaler": scaler.state_dict()}
    out.append(checkpoint["scaler"])
    return out


def activation_checkpoint(torch, init, steps=2):
    nn = torch.nn
    cp = torch.utils.checkpoint
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(8, 8); self.l2 = nn.Linear(8, 8)
        def forward(self, x):
            return x + self.l2(torch.tanh(self.l1(x)))
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(3)])
            self.seq = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8), nn.GELU())
        def forward(self, x, reentrant):
            for b in self.blocks:
                x = cp.checkpoint(b, x, use_reentrant=reentrant)
            x = cp.checkpoint_sequential(self.seq, 2, x, use_reentrant=reentrant)
            return x
    rng = np.random.RandomState(30)
    x = torch.from_numpy(rng.randn(4, 8).astype(np.float32)).requires_grad_()
    out = []
    for reentrant in (False, True):
        net = Net(); init(net)
        opt = torch.optim.Adam(net.parameters(), lr=0.01)
        for _ in range(steps):
            opt.zero_grad()
            loss = net(x, reentrant).pow(2).mean()
            loss.backward()
            opt.step()
            out.append([loss, x.grad])
            x.grad = None
    return out


def channels_last(torch, init, steps=2):
    nn = torch.nn; F = torch.nn.functional
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.Conv2d(8, 8, 3, stride=2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
    init(model)
    model = model.to(memory_format=torch.channels_last)
    out = [model[0].weight.is_contiguous(memory_format=torch.channels_last), model[0].weight.stride()]
    rng = np.random.RandomState(31)
    input = torch.from_numpy(rng.randn(2, 3, 8, 8).astype(np.float32))
    input = input.to(memory_format=torch.channels_last)
    out.append([input.stride(), input.is_contiguous(), input.is_contiguous(memory_format=torch.channels_last)])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        y = model[0](input)
        out.append([y.stride(), y.is_contiguous(memory_format=torch.channels_last)])
        loss = F.cross_entropy(model(input), torch.tensor([0, 1]))
        loss.backward()
        out.append([loss, model[0].weight.grad.stride(), model[0].weight.stride()])
        opt.step()
    return out


def chatbot(torch, init, n_iteration=3, attn_model='dot'):
    nn = torch.nn; F = torch.nn.functional
    rng = np.random.RandomState(33)
    pairs = [[list(rng.randint(3, 15, rng.randint(1, 6))), list(rng.randint(3, 15, rng.randint(1, 6)))]
             for _ in range(10)]
    def indexesFromSentence(sentence):
        return list(sentence) + [EOS_token]
    def zeroPadding(l, fillvalue=PAD_token):
        return list(itertools.zip_longest(*l, fillvalue=fillvalue))
    def binaryMatrix(l, value=PAD_token):
        m = []
        for i, seq in enumerate(l):
            m.append([])
            for token in seq:
                if token == PAD_token:
                    m[i].append(0)
                else:
                    m[i].append(1)
        return m
    def inputVar(l):
        indexes_batch = [indexesFromSentence(sentence) for sentence in l]
        lengths = torch.tensor([len(indexes) for indexes in indexes_batch])
        padList = zeroPadding(indexes_batch)
        padVar = torch.LongTensor(padList)
        return padVar, lengths
    def outputVar(l):
        indexes_batch = [indexesFromSentence(sentence) for sentence in l]
        max_target_len = max([len(indexes) for indexes in indexes_batch])
        padList = zeroPadding(indexes_batch)
        mask = binaryMatrix(padList)
        mask = torch.BoolTensor(mask)
        padVar = torch.LongTensor(padList)
        return padVar, mask, max_target_len
    def batch2TrainData(pair_batch):
        pair_batch.sort(key=lambda x: len(x[0]), reverse=True)
        input_batch, output_batch = [], []
        for pair in pair_batch:
            input_batch.append(pair[0])
            output_batch.append(pair[1])
        inp, lengths = inputVar(input_batch)
        output, mask, max_target_len = outputVar(output_batch)
        return inp, lengths, output, mask, max_target_len
    class EncoderRNN(nn.Module):
        def __init__(self, hidden_size, embedding, n_layers=1, dropout=0):
            super(EncoderRNN, self).__init__()
            self.n_layers = n_layers
            self.hidden_size = hidden_size
            self.embedding = embedding
            self.gru = nn.GRU(hidden_size, hidden_size, n_layers,
                              dropout=(0 if n_layers == 1 else dropout), bidirectional=True)
        def forward(self, input_seq, input_lengths, hidden=None):
            embedded = self.embedding(input_seq)
            packed = nn.utils.rnn.pack_padded_sequence(embedded, input_lengths.to("cpu"))
            outputs, hidden = self.gru(packed, hidden)
            outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs)
            outputs = outputs[:, :, :self.hidden_size] + outputs[:, :, self.hidden_size:]
            return outputs, hidden
    class Attn(nn.Module):
        def __init__(self, method, hidden_size):
            super(Attn, self).__init__()
            self.method = method
            if self.method not in ['dot', 'general', 'concat']:
                raise ValueError(self.method, "is not an appropriate attention method.")
            self.hidden_size = hidden_size
            if self.method == 'general':
                self.attn = nn.Linear(self.hidden_size, hidden_size)
            elif self.method == 'concat':
                self.attn = nn.Linear(self.hidden_size * 2, hidden_size)
                self.v = nn.Parameter(torch.FloatTensor(hidden_size))
        def dot_score(self, hidden, encoder_output):
            return torch.sum(hidden * encoder_output, dim=2)
        def general_score(self, hidden, encoder_output):
            energy = self.attn(encoder_output)
            return torch.sum(hidden * energy, dim=2)
        def concat_score(self, hidden, encoder_output):
            energy = self.attn(torch.cat((hidden.expand(encoder_output.size(0), -1, -1), encoder_output), 2)).tanh()
            return torch.sum(self.v * energy, dim=2)
        def forward(self, hidden, encoder_outputs):
            if self.method == 'general':
                attn_energies = self.general_score(hidden, encoder_outputs)
            elif self.method == 'concat':
                attn_energies = self.concat_score(hidden, encoder_outputs)
            elif self.method == 'dot':
                attn_energies = self.dot_score(hidden, encoder_outputs)
            attn_energies = attn_energies.t()
            return F.softmax(attn_energies, dim=1).unsqueeze(1)
    class LuongAttnDecoderRNN(nn.Module):
        def __init__(self, attn_model, embedding, hidden_size, output_size, n_layers=1, dropout=0.1):
            super(LuongAttnDecoderRNN, self).__init__()
            self.attn_model = attn_model
            self.hidden_size = hidden_size
            self.output_size = output_size
            self.n_layers = n_layers
            self.dropout = dropout
            self.embedding = embedding
            self.embedding_dropout = nn.Dropout(dropout)
            self.gru = nn.GRU(hidden_size, hidden_size, n_layers, dropout=(0 if n_layers == 1 else dropout))
            self.concat = nn.Linear(hidden_size * 2, hidden_size)
            self.out = nn.Linear(hidden_size, output_size)
            self.attn = Attn(attn_model, hidden_size)
        def forward(self, input_step, last_hidden, encoder_outputs):
            embedded = self.embedding(input_step)
            embedded = self.embedding_dropout(embedded)
            rnn_output, hidden = self.gru(embedded, last_hidden)
            attn_weights = self.attn(rnn_output, encoder_outputs)
            context = attn_weights.bmm(encoder_outputs.transpose(0, 1))
            rnn_output = rnn_output.squeeze(0)
            context = context.squeeze(1)
            concat_input = torch.cat((rnn_output, context), 1)
            concat_output = torch.tanh(self.concat(concat_input))
            output = self.out(concat_output)
            output = F.softmax(output, dim=1)
            return output, hidden
    def maskNLLLoss(inp, target, mask):
        nTotal = mask.sum()
        crossEntropy = -torch.log(torch.gather(inp, 1, target.view(-1, 1)).squeeze(1))
        loss = crossEntropy.masked_select(mask).mean()
        return loss, nTotal.item()
    hidden_size, encoder_n_layers, decoder_n_layers, dropout, batch_size = 8, 2, 2, 0.0, 4
    voc_num_words = 15
    embedding = nn.Embedding(voc_num_words, hidden_size)
    encoder = EncoderRNN(hidden_size, embedding, encoder_n_layers, dropout)
    decoder = LuongAttnDecoderRNN(attn_model, embedding, hidden_size, voc_num_words, decoder_n_layers, dropout)
    if attn_model == 'concat':
        nn.init.normal_(decoder.attn.v)
    init(embedding, encoder, decoder)
    encoder.train(); decoder.train()
    learning_rate, decoder_learning_ratio, clip = 0.01, 5.0, 50.0
    encoder_optimizer = torch.optim.Adam(encoder.parameters(), lr=learning_rate)
    decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=learning_rate * decoder_learning_ratio)
    def train(input_variable, lengths, target_variable, mask, max_target_len, teacher):
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        loss = 0
        print_losses = []
        n_totals = 0
        encoder_outputs, encoder_hidden = encoder(input_variable, lengths)
        decoder_input = torch.LongTensor([[SOS_token for _ in range(batch_size)]])
        decoder_hidden = encoder_hidden[:decoder.n_layers]
        if teacher:
            for t in range(max_target_len):
                decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden, encoder_outputs)
                decoder_input = target_variable[t].view(1, -1)
                mask_loss, nTotal = maskNLLLoss(decoder_output, target_variable[t], mask[t])
                loss += mask_loss
                print_losses.append(mask_loss.item() * nTotal)
                n_totals += nTotal
        else:
            for t in range(max_target_len):
                decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden, encoder_outputs)
                _, topi = decoder_output.topk(1)
                decoder_input = torch.LongTensor([[topi[i][0] for i in range(batch_size)]])
                mask_loss, nTotal = maskNLLLoss(decoder_output, target_variable[t], mask[t])
                loss += mask_loss
                print_losses.append(mask_loss.item() * nTotal)
                n_totals += nTotal
        loss.backward()
        _ = nn.utils.clip_grad_norm_(encoder.parameters(), clip)
        _ = nn.utils.clip_grad_norm_(decoder.parameters(), clip)
        encoder_optimizer.step()
        decoder_optimizer.step()
        return sum(print_losses) / n_totals
    out = []
    brng = np.random.RandomState(34)
    for iteration in range(1, n_iteration + 1):
        training_batch = batch2TrainData([pairs[i] for i in brng.choice(len(pairs), batch_size)])
        input_variable, lengths, target_variable, mask, max_target_len = training_batch
        out.append(train(input_variable, lengths, target_variable, mask, max_target_len, iteration % 2 == 1))
    class GreedySearchDecoder(nn.Module):
        def __init__(self, encoder, decoder):
            super(GreedySearchDecoder, self).__init__()
            self.encoder = encoder
            self.decoder = decoder
        def forward(self, input_seq, input_length, max_length):
            encoder_outputs, encoder_hidden = self.encoder(input_seq, input_length)
            decoder_hidden = encoder_hidden[:self.decoder.n_layers]
            decoder_input = torch.ones(1, 1, dtype=torch.long) * SOS_token
            all_tokens = torch.zeros([0], dtype=torch.long)
            all_scores = torch.zeros([0])
            for _ in range(max_length):
                decoder_output, decoder_hidden = self.decoder(decoder_input, decoder_hidden, encoder_outputs)
                decoder_scores, decoder_input = torch.max(decoder_output, dim=1)
                all_tokens = torch.cat((all_tokens, decoder_input), dim=0)
                all_scores = torch.cat((all_scores, decoder_scores), dim=0)
                decoder_input = torch.unsqueeze(decoder_input, 0)
            return all_tokens, all_scores
    encoder.eval(); decoder.eval()
    searcher = GreedySearchDecoder(encoder, decoder)
    indexes_batch = [indexesFromSentence(pairs[0][0])]
    lengths = torch.tensor([len(indexes) for indexes in indexes_batch])
    input_batch = torch.LongTensor(indexes_batch).transpose(0, 1)
    with torch.no_grad():
        tokens, scores = searcher(input_batch, lengths, 6)
    out.append([tokens, scores])
    return out


def ppo(torch, init, updates=3, continuous=False):
    nn = torch.nn; F = torch.nn.functional; D = torch.distributions
    rng = np.random.RandomState(35)
    obs_dim, act_dim, n = 4, 2, 16
    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.actor = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, act_dim))
            self.critic = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, 1))
            self.log_std = nn.Parameter(torch.zeros(act_dim) - 0.5)
        def dist(self, obs):
            if continuous:
                mu = self.actor(obs)
                return D.Independent(D.Normal(mu, self.log_std.exp()), 1)
            return D.Categorical(logits=self.actor(obs))
        def forward(self, obs):
            return self.dist(obs), self.critic(obs).squeeze(-1)
    ac = ActorCritic(); init(ac)
    opt = torch.optim.Adam(ac.parameters(), lr=3e-3, eps=1e-5)
    obs = torch.from_numpy(rng.randn(n, obs_dim).astype(np.float32))
    if continuous:
        actions = torch.from_numpy(rng.randn(n, act_dim).astype(np.float32))
    else:
        actions = torch.from_numpy(rng.randint(0, act_dim, n))
    rewards = rng.rand(n).astype(np.float32)
    dones = (rng.rand(n) < 0.2).astype(np.float32)
    out = []
    with torch.no_grad():
        d0, values = ac(obs)
        old_logp = d0.log_prob(actions)
    # GAE
    gamma, lam = 0.99, 0.95
    adv = torch.zeros(n)
    lastgaelam = 0
    rew_t = torch.from_numpy(rewards); done_t = torch.from_numpy(dones)
    for t in reversed(range(n)):
        nextvalue = values[t + 1] if t + 1 < n else torch.tensor(0.0)
        nonterminal = 1.0 - done_t[t]
        delta = rew_t[t] + gamma * nextvalue * nonterminal - values[t]
        adv[t] = lastgaelam = delta + gamma * lam * nonterminal * lastgaelam
    returns = adv + values
    out.append([adv, returns])
    for epoch in range(updates):
        for mb in (torch.arange(0, 8), torch.arange(8, 16)):
            dist, v = ac(obs[mb])
            logp = dist.log_prob(actions[mb])
            ratio = (logp - old_logp[mb]).exp()
            a = adv[mb]
            a = (a - a.mean()) / (a.std() + 1e-8)
            pg_loss1 = -a * ratio
            pg_loss2 = -a * torch.clamp(ratio, 1 - 0.2, 1 + 0.2)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            v_loss = 0.5 * ((v - returns[mb]) ** 2).mean()
            ent = dist.entropy().mean()
            approx_kl = ((ratio - 1) - (logp - old_logp[mb])).mean()
            clipfrac = ((ratio - 1.0).abs() > 0.2).float().mean().item()
            loss = pg_loss - 0.01 * ent + v_loss * 0.5
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(ac.parameters(), 0.5)
            opt.step()
            out.append([loss, ent, approx_kl, clipfrac])
    with torch.no_grad():
        d1, _ = ac(obs)
        out.append(D.kl_divergence(d0, d1))
        if not continuous:
            out.append([d1.probs, d1.logits, d1.mode if hasattr(d1, 'mode') else None])
        else:
            out.append([d1.mean, d1.stddev, d1.variance])
    return out


def cvae(torch, init, steps=3):
    nn = torch.nn; F = torch.nn.functional
    rng = np.random.RandomState(36)
    x = torch.from_numpy(rng.rand(10, 16).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 4, 10))
    eps = [torch.from_numpy(rng.randn(10, 3).astype(np.float32)) for _ in range(steps)]
    class CVAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(16 + 4, 12); self.mu = nn.Linear(12, 3); self.lv = nn.Linear(12, 3)
            self.dec = nn.Sequential(nn.Linear(3 + 4, 12), nn.LeakyReLU(0.2), nn.Linear(12, 16))
        def forward(self, x, c, e):
            h = F.elu(self.enc(torch.cat([x, c], dim=1)))
            mu, logvar = self.mu(h), self.lv(h)
            z = mu + e * torch.exp(0.5 * logvar)
            return torch.sigmoid(self.dec(torch.cat([z, c], 1))), mu, logvar
    model = CVAE(); init(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    out = []
    for i in range(steps):
        y_onehot = torch.zeros(10, 4).scatter_(1, y.unsqueeze(1), 1)
        c2 = F.one_hot(y, num_classes=4).float()
        assert torch.equal(y_onehot, c2)
        recon, mu, logvar = model(x, y_onehot, eps[i])
        bce = F.binary_cross_entropy(recon, x, reduction='sum')
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        beta_kld = torch.mean(-0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp(), dim=1), dim=0)
        bce_logits = F.binary_cross_entropy_with_logits(torch.logit(recon.clamp(1e-6, 1 - 1e-6)), x, reduction='sum')
        loss = (bce + kld) / x.size(0)
        opt.zero_grad(); loss.backward(); opt.step()
        out.append([loss, beta_kld, bce_logits])
    return out


class _DS:
    def __init__(self, torch, n=20):
        self.torch = torch
        rng = np.random.RandomState(28)
        self.x = rng.rand(n, 3).astype(np.float32); self.y = rng.randint(0, 2, n)
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return {"x": self.torch.from_numpy(self.x[i]), "y": int(self.y[i]), "meta": (i, "s%d" % i)}


def loader_workers(torch, init, workers=2):
    ds = _DS(torch)
    seen = []
    def wif(wid):
        info = torch.utils.data.get_worker_info()
        assert info.id == wid and info.num_workers == workers
    dl = torch.utils.data.DataLoader(ds, batch_size=6, num_workers=workers, worker_init_fn=wif,
                                     persistent_workers=True, drop_last=False)
    out = []
    for epoch in range(2):
        for b in dl:
            out.append([b["x"], b["y"], b["meta"][0], list(b["meta"][1])])
    dl2 = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(10.0), torch.arange(10)),
                                      batch_size=4, num_workers=workers, prefetch_factor=2)
    out.append([list(b) for b in dl2])
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
    dl3 = torch.utils.data.DataLoader(ds, batch_size=3, sampler=sampler)
    sampler.set_epoch(1)
    out.append([b["y"] for b in dl3])
    bs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(10)), batch_size=3, drop_last=True)
    out.append(list(bs))
    sub = torch.utils.data.Subset(ds, [3, 1, 4])
    cat = torch.utils.data.ConcatDataset([sub, sub])
    out.append([len(cat), [cat[i]["y"] for i in range(len(cat))]])
    return out


CASES = {
    "language_translation": (translation, {}),
    "text_classification": (text_classification, {}),
    "text_classification_sparse": (text_classification, dict(sparse=True)),
    "transfer_learning_fixed": (transfer_learning, {}),
    "transfer_learning_finetune": (transfer_learning, dict(fixed=False)),
    "nn_tutorial": (nn_tutorial, {}),
    "learning_with_examples": (learning_with_examples, {}),
    "parametrizations": (parametrizations, {}),
    "pruning": (pruning, {}),
    "swa_and_ema": (swa, {}),
    "func_ensembling_and_per_sample_grads": (func_ensembling, {}),
    "forward_ad": (forward_ad, {}),
    "amp_cpu_bfloat16": (amp_cpu, {}),
    "activation_checkpoint": (activation_checkpoint, {}),
    "channels_last": (channels_last, {}),
    "chatbot_dot": (chatbot, {}),
    "chatbot_general": (chatbot, dict(attn_model="general")),
    "chatbot_concat": (chatbot, dict(attn_model="concat")),
    "ppo_categorical": (ppo, {}),
    "ppo_normal": (ppo, dict(continuous=True)),
    "conditional_vae": (cvae, {}),
    "dataloader_workers": (loader_workers, {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tutorial_program_matches_torch(name):
    prog, kw = CASES[name]
    got, want = run_pair(prog, torch, **kw)
    assert_close(got, want)
