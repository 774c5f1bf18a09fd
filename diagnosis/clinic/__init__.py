"""The clinic: patients' cases, their steps, corrections and confirmations, the advice and its
explanations, the case audit, teams, and the screens that read them."""
