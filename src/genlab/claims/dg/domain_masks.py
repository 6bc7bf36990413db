"""``dg.domain_masks`` (Chattopadhyay, Balaji & Hoffman, ECCV 2020, #75): DMG, a mask over the
last features per source domain with a penalty on mask overlap (predictions averaged over the
masks on an unseen domain), against ERM on held-out environments.

The method follows the official code (``prithv1/DMG``): ``dmg`` with ``masks="sampled"`` — hard
Bernoulli masks per example with a straight-through gradient in training, mask logits initialised
uniform in [0, 1), the mean pairwise soft IoU of the masks weighted 0.1 (the code's
``OVERLAP_LAMBDA``, no sparsity penalty), and on the unseen domain the logits averaged over the
source masks used as soft scales (``softscale``); model selection by the mean source-domain
validation accuracy, as the code's ``best_so_far`` (DomainBed's training-domain validation).
Differences from the paper and its code:

- data and model: rotated and colored 8x8 digits with the core MLP trained from scratch, not PACS
  and DomainNet with an ImageNet-pretrained AlexNet / ResNet;
- one masked layer (the penultimate features), not the inputs of all three AlexNet classifier
  layers (the PACS config);
- in-domain validation scores each domain's validation set with the average over masks, the code
  with that domain's own hard (thresholded) mask;
- optimiser: DomainBed's defaults (Adam, lr 1e-3, no weight decay, batch 64 per training
  environment, 301 / 1,001 steps), not Adam at lr 1e-4 with weight decay 1e-5, a separate mask
  optimiser, a mixed-domain batch of 64 and 150 epochs with exponential decay;
- aggregation: the paired gain DMG - ERM in suite-average held-out accuracy, mean and 95% CI over
  seeds (3), not the paper's per-target-domain accuracies (a mean over runs).

DomainBed's search (Dec 4 2026, issue #31): at the full budget each arm is read at its best of 4
draws per seed (``genlab.claims.search``). Measured (3 seeds, 451 s with controls): suite-average
held out DMG 0.727, ERM 0.727, gain -0.000 [-0.005, 0.005], below the 0.01 bar: not reproduced
(the gains of +0.001 to +0.022 on rotations cancelled by -0.070 on colored +90%); both negative
controls not reproduced, the positive control reproduced. At the defaults: 0.006 [-0.011, 0.023].

Measured history (the soft masks the claim ran until Dec 1 2026): docs/domain_shift.md
(dg.domain_masks).
"""

from __future__ import annotations

from genlab.claims import register
from genlab.claims.base import Control, Ref
from genlab.claims.dg.common import BeatsERM


class DomainMasks(BeatsERM):
    """DMG vs ERM on held-out environments (Chattopadhyay et al., #75)."""

    id = "dg.domain_masks"
    METHOD = "dmg"
    METHOD_PARAMS = {"masks": "sampled"}  # the official code's training and test rules
    papers = (
        Ref(
            75,
            "Chattopadhyay, Balaji & Hoffman 2020",
            "Learning to balance specificity "
            "and invariance for in and out of domain generalization",
        ),
    )
    scope = "proxy"
    scope_note = (
        "The official code's DMG (sampled masks, overlap penalty, mask averaging) on rotated and "
        "colored 8x8 digits with an MLP from scratch, one masked layer and DomainBed's optimiser, "
        "each arm at its best of 4 random-search draws at the full budget (DomainBed draws 20), "
        "not PACS / DomainNet with an ImageNet-pretrained AlexNet or ResNet"
    )
    statement = (
        "DMG beats ERM in suite-average held-out accuracy (rotated and colored digits, "
        "training-domain validation): the 95% CI over seeds of the paired gain is above 0 and its "
        "mean >= 0.01. Not reproduced when the CI's upper end is below 0.01 (parity or worse)."
    )
    controls = {
        **BeatsERM.controls,
        "positive": Control(
            {"suite": ["rotated_digits:0", "rotated_digits:5"], "seeds": 5},
            "reproduced",
            "the larger-signal part of the suite: the two extreme rotations (0 and 75 degrees, "
            "outside the span of the source angles), where the claim's full run gains most among "
            "the rotated settings (+0.011, +0.022), with 5 seeds (colored +90% held out gains "
            "+0.049 there but swings over seeds: -0.011 [-0.170, 0.147] at 5); measured Dec 1 2026: +0.024 [0.004, 0.044], 207 s "
            "at load average ~10. Chosen after seeing the full run's per-setting gains and "
            "sharing its seeds 0-2, so it shows 'reproduced' is reachable, not more",
            budget="full",
            heavy=True,
        ),
    }


register(DomainMasks())
