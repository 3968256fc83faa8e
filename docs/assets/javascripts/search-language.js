/*
 * One line under the search box when the query is written in the site's other language: a reader who
 * types Chinese on the English pages (or English words on the Chinese pages) gets a link that runs the
 * same query on the other language's pages (Material opens its search with the query of `?q=`).
 * Each language searches only its own pages (workers/course-search.js), so without this line a Chinese
 * question on the English site finds nothing and says nothing more. The line is in Chinese on both sites:
 * on the English pages it answers a query typed in Chinese, on the Chinese pages it speaks to their reader.
 */
(function () {
  "use strict"

  var HAN = /\p{sc=Han}/u
  var TEXT = {
    en: function (query) { return "在中文页面中搜索“" + query + "” →" },
    zh: function (query) { return "在英文页面中搜索“" + query + "” →" },
  }

  /** The other language's code when the query is written in it, else null. */
  function otherLanguage(query, lang) {
    var words = query.trim().split(/\s+/).filter(function (word) { return /[a-z]{2,}/i.test(word) })
    if (lang === "en" && HAN.test(query))
      return "zh"
    if (lang === "zh" && !HAN.test(query) && words.length >= 2)
      return "en"
    return null
  }

  function update(input) {
    var lang = (document.documentElement.lang || "en").slice(0, 2)
    var output = document.querySelector(".md-search-result")
    if (!output)
      return
    var line = output.querySelector(".course-search-other")
    var query = input.value.trim()
    var other = query ? otherLanguage(query, lang) : null
    var alternate = other && document.querySelector('a.md-select__link[hreflang="' + other + '"]')
    if (!alternate) {
      if (line)
        line.remove()
      return
    }
    if (!line) {
      line = document.createElement("div")
      line.className = "course-search-other"
      line.innerHTML = '<a></a>'
      output.insertBefore(line, output.firstChild)
    }
    var link = line.querySelector("a")
    var target = new URL(alternate.getAttribute("href"), location.href)
    target.search = "?q=" + encodeURIComponent(query)
    link.href = target.href
    // no hreflang: Material would take it for its language switcher and drop the query
    link.dataset.lang = other
    link.lang = "zh"  // the language of its text
    link.textContent = TEXT[lang](query)
  }

  function watch() {
    var input = document.querySelector(".md-search__input")
    if (!input || input.dataset.courseOther)
      return
    input.dataset.courseOther = "1"
    ;["input", "keyup", "focus"].forEach(function (type) {
      input.addEventListener(type, function () { update(input) })
    })
    if (input.value)
      update(input)
  }

  if (document.readyState === "loading")
    document.addEventListener("DOMContentLoaded", watch)
  else
    watch()
})()
