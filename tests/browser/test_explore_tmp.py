import time, pytest
pytestmark = pytest.mark.browser
def test_explore(lab, browser):
    kid = lab.start_kernel_for("00_start_here.ipynb")
    page = browser.new_page()
    t=time.perf_counter()
    page.goto(lab.lab_url("00_start_here.ipynb", "w0"))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60000)
    print("loaded", time.perf_counter()-t)
    print(page.evaluate("typeof window.jupyterapp"))
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    time.sleep(15)
    print(lab.kernel_state(kid))
    print(page.evaluate("Array.from(document.querySelectorAll('.jp-InputPrompt')).map(e=>e.textContent)"))
    print(page.inner_html(".course-panel")[:3000])
    print(page.evaluate("document.querySelector('.jp-Notebook-ExecutionIndicator')?.outerHTML"))
    page.screenshot(path="/tmp/shot.png")
