(function () {
  // kgrepl's tick slider (kernel/nb/scrub.go). The page holds every tick
  // drawn ahead: an animated diagram (CSS keyframes, frame k in the k-th
  // slice of its cycle), the pause meter and a trace per tick. This script
  // holds the animation at the slider's frame, moves the cursor on the
  // pause meter and shows that tick's trace. It sets up every slider on
  // the page not set up yet, once it is in the document: Notebook 6 runs
  // an output's scripts from a copy in <head>, JupyterLab in place, maybe
  // before the output is attached.
  var READY = "data-kgrepl-ready";

  function setup(root) {
    if (root.hasAttribute(READY) || !root.isConnected) return;
    root.setAttribute(READY, "1");
    var from = +root.getAttribute("data-from");
    var n = +root.getAttribute("data-frames");
    var xs = root.getAttribute("data-pause-x").split(" ").map(Number);
    var bar = root.querySelector(".kgrepl-scrub-bar");
    var slider = root.querySelector(".kgrepl-scrub-slider");
    var play = root.querySelector(".kgrepl-scrub-play");
    var label = root.querySelector(".kgrepl-scrub-tick");
    var cursor = root.querySelector(".kgrepl-scrub-cursor");
    var traces = root.querySelectorAll(".kgrepl-scrub-trace pre");
    var pic = root.querySelector(".kgrepl-scrub-diagram .kgrepl-picture");
    var svg = pic.querySelector("svg");
    // The animation's CSS (its keyframes and frame ids) moves into a shadow
    // root with it, where no other picture on the page can meet it.
    if (pic.attachShadow && !pic.shadowRoot) {
      pic.attachShadow({mode: "open"}).appendChild(svg);
    }
    var k = 0, timer = null;

    function show(i) {
      k = Math.max(0, Math.min(n - 1, i));
      // Asked each time: hiding a picture (a closed output, a tab in the
      // background) ends its animations, and showing it starts new ones.
      var anims = svg.getAnimations ? svg.getAnimations({subtree: true}) : [];
      var cycle = 0;
      anims.forEach(function (a) {
        var d = a.effect ? +a.effect.getComputedTiming().duration : 0;
        if (d > cycle) cycle = d;
      });
      anims.forEach(function (a) {
        a.pause();
        a.currentTime = (k + 0.5) * cycle / n;
      });
      slider.value = k;
      label.textContent = "t=" + (from + k);
      root.setAttribute("data-tick", from + k);
      cursor.style.left = (100 * xs[k]) + "%";
      for (var j = 0; j < traces.length; j++) traces[j].style.display = j === k ? "" : "none";
    }

    function stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      play.textContent = "▶ play";
    }

    slider.addEventListener("input", function () { stop(); show(+slider.value); });
    play.addEventListener("click", function () {
      if (timer !== null) { stop(); return; }
      if (k >= n - 1) show(0);
      play.textContent = "❚❚ pause";
      timer = setInterval(function () {
        if (k >= n - 1 || !root.isConnected) { stop(); return; }
        show(k + 1);
      }, 500);
    });
    bar.style.display = "flex";
    cursor.style.display = "block";
    show(0);
  }

  function setupAll() {
    var roots = document.querySelectorAll(".kgrepl-scrub:not([" + READY + "])");
    for (var i = 0; i < roots.length; i++) setup(roots[i]);
  }

  var me = document.currentScript;
  var mine = me && me.closest ? me.closest(".kgrepl-scrub") : null;
  var tries = 0;
  (function wait() {
    setupAll();
    if (mine && !mine.hasAttribute(READY) && tries++ < 200) setTimeout(wait, 50);
  })();
  setTimeout(setupAll, 0);
})();
