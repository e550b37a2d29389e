import pandas as pd, numpy as np, json
key = ['design', 'N', 'estimand', 'eps', 'k']
a = pd.DataFrame([json.loads(l) for l in open('results.jsonl') if l.startswith('{')])
b = pd.DataFrame([json.loads(l) for l in open('results2.jsonl') if l.startswith('{')])
def pool(g):
    w = g.reps; n = w.sum(); cov = (g.coverage * w).sum() / n
    bias = (g.bias * w).sum() / n; mse = ((g.rmse ** 2) * w).sum() / n
    return pd.Series(dict(reps=n, coverage=cov, cov_se=np.sqrt(cov * (1 - cov) / n), bias=bias, sd=np.sqrt(max(mse - bias ** 2, 0)),
                          rmse=np.sqrt(mse), med_width=(g.med_width * w).sum() / n, full_range=(g.full_range * w).sum() / n))
P = pd.concat([a, b]).groupby(key).apply(pool).reset_index()
d = b.set_index(key)[['dcov', 'dcov_se', 'mse_ratio', 'mse_ratio_se']]
P = P.join(d, on=key)
P['k'] = P.k.map({1.0: '1', 0.333: '1/3', 0.5: '1/2', 0.1: '1/10'})
P['order'] = P.k.map({'1': 0, '1/2': 1, '1/3': 2, '1/10': 3})
P = P.sort_values(['design', 'N', 'estimand', 'eps', 'order']).drop(columns='order')
P.to_csv('pooled.csv', index=False)
pd.set_option('display.width', 250); pd.set_option('display.max_rows', 500)
print(P.to_string(index=False, float_format=lambda v: f'{v:.3g}'))
