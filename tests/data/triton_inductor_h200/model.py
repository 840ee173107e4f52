import torch, torch.nn as nn
class Block(nn.Module):
    def __init__(self, d=1024):
        super().__init__(); self.fc1 = nn.Linear(d, 4*d); self.fc2 = nn.Linear(4*d, d); self.norm = nn.LayerNorm(d)
    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(self.norm(x)))
        return torch.softmax(self.fc2(h) + x, dim=-1)
torch.manual_seed(0)
m = Block().cuda().half(); x = torch.randn(2048, 1024, device='cuda', dtype=torch.half)
cm = torch.compile(m, mode='max-autotune-no-cudagraphs')
with torch.no_grad():
    y = cm(x); torch.cuda.synchronize()
    ref = m(x); print('max abs diff', (y - ref).abs().max().item())
