"""The core's views: the error pages and the CSRF failure page, and what every page shares
(``common.page``).  The screens are the apps' (``diagnosis/clinic/views``, ...)."""
