/** Moves to a console page; pages are the URL's fragment, so the service serves one document. */
export function go(route: string): void {
  location.hash = route;
}
