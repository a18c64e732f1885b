// The console's one script: the copy button of the one-time key page. Everything else works without it.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.dataset.copy);
    const status = button.parentElement.querySelector('.copied');
    if (!source || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        status.textContent = 'Copied.';
      } catch {
        status.textContent = 'Copying is not allowed here; select the key and copy it yourself.';
      }
    });
  }
  // After a refused form, the summary of its problems takes the focus, so a keyboard or screen-reader user starts there.
  document.getElementById('problems')?.focus();
});
