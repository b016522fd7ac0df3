// Every visible text on the page against its background, by WCAG 2.1's contrast ratio:
// returns the texts below 4.5:1 (3:1 for large text: 24px, or 18.66px bold).
const luminance = ([r, g, b]) => {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
};
const rgba = (css) => (css.match(/[\d.]+/g) || []).map(Number);
const background = (el) => {
  for (let e = el; e; e = e.parentElement) {
    const c = rgba(getComputedStyle(e).backgroundColor);
    if (c.length >= 3 && (c.length < 4 || c[3] > 0)) return c.slice(0, 3);
  }
  return [255, 255, 255];
};
const failures = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const el = node.parentElement;
  if (!node.textContent.trim() || !el || !el.checkVisibility()) continue;
  if (el.closest(".skip")) continue;
  const style = getComputedStyle(el);
  const fg = rgba(style.color).slice(0, 3);
  const [l1, l2] = [luminance(fg), luminance(background(el))].sort((a, b) => b - a);
  const ratio = (l1 + 0.05) / (l2 + 0.05);
  const size = parseFloat(style.fontSize);
  const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
  if (ratio < (large ? 3 : 4.5)) {
    failures.push(`${ratio.toFixed(2)}: ${node.textContent.trim().slice(0, 40)}`);
  }
}
return failures;
