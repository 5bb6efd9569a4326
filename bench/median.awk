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
