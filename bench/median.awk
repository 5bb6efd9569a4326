# median(s): the median of the blank-separated numbers in s ("" for none).
# Shared by the bench scripts' reports, which prepend it to their programs.
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	if (n == 0) return ""
	for (i = 2; i <= n; i++) {
		t = a[i] + 0
		for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# range(s): "lowest–highest" of the numbers in s, 4 decimals. For n paired
# ratios it is a distribution-free interval of their median, of confidence
# 1 - 2^(1-n): 94% for 5, 98% for 7.
function range(s,    a, n, i, lo, hi) {
	n = split(s, a, " ")
	if (n == 0) return ""
	lo = hi = a[1] + 0
	for (i = 2; i <= n; i++) {
		if (a[i] + 0 < lo) lo = a[i] + 0
		if (a[i] + 0 > hi) hi = a[i] + 0
	}
	return sprintf("%.4f–%.4f", lo, hi)
}
